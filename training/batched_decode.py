"""Batched free-text decoding for :class:`training.generation.Decoder` (evaluation, issue #12).

:func:`sample_batch` generates one utterance for each of many prompts: one KV-cached forward per
token for all rows, value-guided like :meth:`Decoder.sample` (the same ``_heads``), each row drawn
with its own generator, so a row's text does not depend on the rows beside it.

Across turns an episode's prompt only grows (its history plus the last action and observation), so
each episode may keep a :class:`RowState`: the tokens its cache holds and their keys and values.
The next turn reuses the longest prefix the new prompt's tokens share with them and feeds only the
rest. A batch then holds rows with different cached and new lengths: the cached parts are packed to
the right of the cache, the new tokens to the right of the input, and the attention mask skips the
gaps; position ids count only a row's real tokens, so every row sees what it would see alone.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from training.batched import left_pad
from training.tokenization import encode


@dataclass
class RowState:
    """An episode's cached tokens and, per LM (the trunk, then a frozen π_β), per layer, (K, V)
    of shape [heads, tokens, head dim]."""

    tokens: list[int] = field(default_factory=list)
    kv: list[list[tuple[torch.Tensor, torch.Tensor]]] = field(default_factory=list)


def _lcp(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _kv_of(cache) -> list[tuple[torch.Tensor, torch.Tensor]] | None:
    """Per layer (K, V) [B, H, T, D] of a transformers cache (None where the API is unknown)."""
    layers = getattr(cache, "layers", None)
    if layers is not None and all(getattr(la, "keys", None) is not None for la in layers):
        return [(la.keys, la.values) for la in layers]
    keys, values = getattr(cache, "key_cache", None), getattr(cache, "value_cache", None)
    if keys is not None and values is not None:
        return list(zip(keys, values, strict=True))
    return None


def _cache_from(kv: list[tuple[torch.Tensor, torch.Tensor]]):
    from transformers import DynamicCache

    if "ddp_cache_data" in inspect.signature(DynamicCache.__init__).parameters:
        return DynamicCache(ddp_cache_data=kv)
    return DynamicCache.from_legacy_cache(tuple(kv))


@torch.no_grad()
def sample_batch(dec, prompts: Sequence[str], generators: Sequence[torch.Generator],
                 greedy: bool | None = None, states: Sequence[RowState | None] | None = None,
                 ) -> tuple[list[str], list[bool]]:
    """:meth:`Decoder.sample` of many prompts at once; ``states`` (one per prompt, or None) carry
    each row's cache from one turn to the next. Returns (utterances, cut flags: the row hit
    ``max_new_tokens``)."""
    greedy = dec.decoding == "greedy" if greedy is None else greedy
    if not prompts:
        return [], []
    m = dec.model
    states = list(states) if states is not None else [None] * len(prompts)
    keep = max(dec.n_positions - dec.max_new_tokens, 1)
    rows = [encode(dec.tok, p)[-keep:] or [dec.pad] for p in prompts]
    lms = [m.lm] + ([m.pi_beta_lm] if m.pi_beta_lm is not None else [])
    reuse = []
    for st, r in zip(states, rows, strict=True):
        usable = st is not None and len(st.kv) == len(lms)
        reuse.append(min(_lcp(st.tokens, r), len(r) - 1) if usable else 0)
    dev = next(m.parameters()).device
    ids, attn = left_pad([r[c:] for r, c in zip(rows, reuse, strict=True)], dec.pad)
    n_new = [len(r) - c for r, c in zip(rows, reuse, strict=True)]
    width = ids.shape[1]
    pos = torch.zeros_like(ids)
    for i, (c, n) in enumerate(zip(reuse, n_new, strict=True)):
        pos[i, width - n:] = torch.arange(c, c + n)
    pasts: list = [None] * len(lms)
    if max(reuse) > 0:
        wide = max(reuse)
        cache_mask = torch.zeros((len(rows), wide), dtype=attn.dtype)
        for i, c in enumerate(reuse):
            cache_mask[i, wide - c:] = 1
        for k in range(len(lms)):
            layers = []
            for layer in range(len(states[next(i for i, c in enumerate(reuse) if c)].kv[k])):
                ref = next(st.kv[k][layer][0] for st, c in zip(states, reuse, strict=True) if c)
                kk = ref.new_zeros((len(rows), ref.shape[0], wide, ref.shape[2]))
                vv = torch.zeros_like(kk)
                for i, (st, c) in enumerate(zip(states, reuse, strict=True)):
                    if c:
                        kk[i, :, wide - c:] = st.kv[k][layer][0][:, :c]
                        vv[i, :, wide - c:] = st.kv[k][layer][1][:, :c]
                layers.append((kk.to(dev), vv.to(dev)))
            pasts[k] = _cache_from(layers)
        attn = torch.cat([cache_mask, attn], dim=1)
    ids, attn, pos = ids.to(dev), attn.to(dev), pos.to(dev)
    b = len(prompts)
    out_ids: list[list[int]] = [[] for _ in range(b)]
    live = list(range(b))
    step_ids = ids
    for _ in range(dec.max_new_tokens):
        outs = []
        for k, lm in enumerate(lms):
            o, pasts[k] = _cached_step(lm, step_ids, pasts[k], hidden=(k == 0), attention_mask=attn,
                                       position_ids=pos)  # fmt: skip
            outs.append(o)
        logits = outs[0].logits[:, -1:]
        h = outs[0].hidden_states[-1][:, -1:]
        beta_logits = outs[1].logits[:, -1:] if len(outs) > 1 else (
            m.beta_head(h) if m.beta_head is not None else None)
        guided, _, _ = dec._heads(logits, h, beta_logits)
        z = (guided[:, -1] / max(dec.temperature, 1e-6)).cpu()
        if dec.banned:
            z[:, dec.banned] = float("-inf")
        nxt = torch.full((b,), dec.pad, dtype=torch.long)
        still = []
        for i in live:
            if greedy:
                t = int(torch.argmax(z[i]))
            else:
                t = int(torch.multinomial(torch.softmax(z[i], dim=-1), 1, generator=generators[i]))
            nxt[i] = t
            out_ids[i].append(t)
            if t != dec.eos:
                still.append(i)
        live = still
        if not live or len(out_ids[live[0]]) >= dec.max_new_tokens:
            break
        fed = torch.zeros((b, 1), dtype=attn.dtype)
        fed[live] = 1  # finished rows feed a masked placeholder
        step_ids = nxt.unsqueeze(1).to(dev)
        attn = torch.cat([attn, fed.to(dev)], dim=1)
        pos = pos[:, -1:] + 1
    _keep_states(states, rows, out_ids, attn, pasts)
    texts = [dec.tok.decode(r, skip_special_tokens=False) for r in out_ids]
    return [t.removesuffix("\n") + "\n" for t in texts], [dec.eos not in r for r in out_ids]


def _keep_states(states, rows, out_ids, attn, pasts) -> None:
    """Store each row's real (attended) keys and values: its prompt and the tokens it fed."""
    if not any(st is not None for st in states):
        return
    per_lm = [_kv_of(p) for p in pasts]
    mask = attn.bool().cpu()
    for i, st in enumerate(states):
        if st is None:
            continue
        st.tokens, st.kv = [], []
        fed = rows[i] + out_ids[i][:-1]
        if any(kv is None for kv in per_lm) or int(mask[i].sum()) != len(fed):
            continue  # unknown cache layout: the next turn starts afresh
        st.tokens = fed
        st.kv = [[(k[i][:, mask[i]].cpu(), v[i][:, mask[i]].cpu()) for k, v in kv] for kv in per_lm]


_NEW_API: dict[type, bool] = {}


def _cached_step(lm, ids: torch.Tensor, cache, hidden: bool, **extra):
    """One forward with a KV cache; transformers >= 5 calls it ``cache``, older ``past_key_values``.
    ``extra``: ``attention_mask`` (past and new tokens), ``position_ids`` (new tokens)."""
    new_api = _NEW_API.get(type(lm))
    if new_api is None:
        new_api = _NEW_API[type(lm)] = "cache" in inspect.signature(lm.forward).parameters
    kw = {"cache": cache} if new_api else {"past_key_values": cache}
    out = lm(input_ids=ids, use_cache=True, output_hidden_states=hidden, **kw, **extra)
    nxt = out.get("cache") if new_api else out.get("past_key_values")
    return out, nxt
