"""Batched free-text decoding for :class:`training.decoding.decoder.Decoder` (evaluation, issue #12).

:func:`sample_batch` generates one utterance for each of many prompts: one KV-cached forward per
token for all rows, value-guided like :meth:`Decoder.sample` (the same ``_heads``), each row drawn
with its own generator, so a row's text does not depend on the rows beside it.

Across turns an episode's prompt only grows (its history plus the last action and observation), so
each episode may keep a :class:`RowState`: the tokens its cache holds and their keys and values.
The next turn reuses the longest prefix the new prompt's tokens share with them and feeds only the
rest. A batch then holds rows with different cached and new lengths: the cached parts are packed to
the right of the cache, the new tokens to the right of the input, and the attention mask skips the
gaps; position ids count only a row's real tokens, so every row sees what it would see alone.
When a turn's rows are prefilled in one group (the usual case) they decode on in that group's
cache; rows that end their line stay in the batch, fed padding and drawing nothing, until half of
them have ended, and then the batch keeps only the others. The caches are
:class:`training.decoding.kv_cache.RowsCache` (one tensor for all layers); GPT-2 models run
:mod:`training.model.fast_gpt2`'s lean forward.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from training.decoding.kv_cache import RowsCache
from training.decoding.padding import left_pad
from training.model import fast_gpt2
from training.model.tokenization import encode_many


@dataclass
class RowState:
    """An episode's cached tokens and, per LM (the trunk, then a frozen π_β), their keys and values
    [2, layers, heads, tokens, head dim] (:meth:`training.decoding.kv_cache.RowsCache.row`)."""

    tokens: list[int] = field(default_factory=list)
    kv: list[torch.Tensor] = field(default_factory=list)


def _lcp(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _packed(lengths: Sequence[int], dev) -> torch.Tensor:
    """[B, widest] mask of rows' cached tokens, each packed to the right (as :meth:`RowsCache.merge`)."""
    wide = max(lengths)
    mask = torch.zeros((len(lengths), wide), dtype=torch.long)
    for i, c in enumerate(lengths):
        mask[i, wide - c :] = 1
    return mask.to(dev)


def _groups(order: list[int], n_new: Sequence[int], slack: int = 32) -> list[list[int]]:
    """Rows (sorted by new tokens) cut into prefill groups whose lengths differ by <= ``slack``
    tokens, so a short row is not padded to a long one."""
    out: list[list[int]] = []
    for i in order:
        if out and n_new[i] - n_new[out[-1][0]] <= slack:
            out[-1].append(i)
        else:
            out.append([i])
    return out


@torch.no_grad()
def sample_batch(
    dec,
    prompts: Sequence[str],
    generators: Sequence[torch.Generator],
    greedy: bool | None = None,
    states: Sequence[RowState | None] | None = None,
) -> tuple[list[str], list[bool]]:
    """:meth:`Decoder.sample` of many prompts at once; ``states`` (one per prompt, or None) carry
    each row's cache from one turn to the next. Returns (utterances, cut flags: the row hit
    ``max_new_tokens``).

    The prompts' uncached tokens are fed in groups of similar length (a prompt that outgrew the
    model's window is fed whole, one whose history only grew just its new tokens); then all rows
    generate together, one forward per token, a row leaving the batch when it ends its line."""
    greedy = dec.decoding == "greedy" if greedy is None else greedy
    if not prompts:
        return [], []
    m = dec.model
    b = len(prompts)
    states = list(states) if states is not None else [None] * b
    keep = max(dec.context - dec.max_new_tokens, 1)
    rows = [r[-keep:] or [dec.pad] for r in encode_many(dec.tok, prompts)]
    lms = [m.lm] + ([m.pi_beta_lm] if m.pi_beta_lm is not None else [])
    reuse = []
    for st, r in zip(states, rows, strict=True):
        usable = st is not None and len(st.kv) == len(lms)
        reuse.append(min(_lcp(st.tokens, r), len(r) - 1) if usable else 0)
    dev = next(m.parameters()).device
    n_layers = [int(lm.config.num_hidden_layers) for lm in lms]
    n_new = [len(r) - c for r, c in zip(rows, reuse, strict=True)]
    out_ids: list[list[int]] = [[] for _ in range(b)]
    kv_rows: list = [None] * b  # with several prefill groups: each row's keys and values, per LM
    z_rows: list = [None] * b
    spans: list = [None] * b  # a row's real tokens in its cache's columns
    groups = _groups(sorted(range(b), key=n_new.__getitem__), n_new)
    for group in groups:  # one group (the usual case): its cache goes on into the decoding below
        room = max(n_new[i] for i in group) + (dec.max_new_tokens if len(groups) == 1 else 0)
        pasts = [
            RowsCache.merge(
                [states[i].kv[k] if reuse[i] else None for i in group],
                [reuse[i] for i in group],
                n_layers[k],
                room,
                dev,
            )
            for k in range(len(lms))
        ]
        ids, attn = left_pad([rows[i][reuse[i] :] for i in group], dec.pad)
        width = ids.shape[1]
        pos = torch.zeros_like(ids)
        for j, i in enumerate(group):
            pos[j, width - n_new[i] :] = torch.arange(reuse[i], len(rows[i]))
        wide = max(reuse[i] for i in group)
        attn = torch.cat([_packed([reuse[i] for i in group], dev), attn.to(dev)], dim=1)
        z = _step(dec, lms, ids.to(dev), pasts, attn, pos.to(dev))
        end = wide + width
        for j, i in enumerate(group):  # its cached tokens, then its new ones
            z_rows[i] = z[j]
            spans[i] = [(wide - reuse[i], wide), (end - n_new[i], end)]
            if len(groups) > 1:
                kv_rows[i] = [p.row(j, spans[i]) for p in pasts]
    active = _drawn(dec, torch.stack(z_rows), greedy, generators, out_ids, list(range(b)))
    going = set(active)
    if len(groups) > 1:
        _keep(states, rows, out_ids, {i: kv_rows[i] for i in range(b) if i not in going})
        if active:
            lengths = [len(rows[i]) for i in active]
            pasts = [
                RowsCache.merge(
                    [kv_rows[i][k] for i in active], lengths, n_layers[k], dec.max_new_tokens, dev
                )
                for k in range(len(lms))
            ]
            attn = _packed(lengths, dev)
            for i in active:
                spans[i] = [(attn.shape[1] - len(rows[i]), attn.shape[1])]
        at: list[int | None] = list(active)  # the episode in each cache row (None: it has left)
    else:
        at = [i if i in going else None for i in groups[0]]
        _keep(
            states,
            rows,
            out_ids,
            {
                i: [p.row(j, spans[i]) for p in pasts]
                for j, i in enumerate(groups[0])
                if i not in going and states[i] is not None
            },
        )
    if active:
        fed_from = pasts[0].n  # the columns of the tokens fed while decoding
        pos = torch.tensor(
            [[len(rows[i]) if i is not None else 0] for i in at], dtype=torch.long, device=dev
        )
        for _ in range(dec.max_new_tokens - 1):
            if 2 * len(going) <= len(at):  # keep only the rows still writing
                kept = [j for j, i in enumerate(at) if i is not None]
                sel = torch.tensor(kept, dtype=torch.long, device=dev)
                pasts = [p.select(sel) for p in pasts]
                attn, pos, at = attn[sel], pos[sel], [at[j] for j in kept]
            step_ids = torch.tensor(
                [[out_ids[i][-1] if i is not None else dec.pad] for i in at],
                dtype=torch.long,
                device=dev,
            )
            attn = torch.cat([attn, attn.new_ones((len(at), 1))], dim=1)
            z = _step(dec, lms, step_ids, pasts, attn, pos)
            live = [j for j, i in enumerate(at) if i is not None]
            going = set(
                _drawn(
                    dec,
                    z if len(live) == len(at) else z[live],
                    greedy,
                    generators,
                    out_ids,
                    [at[j] for j in live],
                )
            )
            leave = [j for j in live if at[j] not in going]
            if leave:  # rows that said "\n" leave, keeping their cache
                _keep(
                    states,
                    rows,
                    out_ids,
                    {
                        at[j]: [p.row(j, [*spans[at[j]], (fed_from, p.n)]) for p in pasts]
                        for j in leave
                        if states[at[j]] is not None
                    },
                )
                for j in leave:
                    at[j] = None
                if not going:
                    break
            pos = pos + 1
    texts = [dec.tok.decode(r, skip_special_tokens=False) for r in out_ids]
    return [t.removesuffix("\n") + "\n" for t in texts], [dec.eos not in r for r in out_ids]


def _step(dec, lms, ids, pasts, attn, pos):
    """One forward of every LM (its cache in ``pasts`` grows); the rows' sampling scores [B, V] on the CPU."""
    m = dec.model
    outs = []
    for k, lm in enumerate(lms):
        o, returned = _cached_step(
            lm,
            ids,
            pasts[k].model_cache(),
            hidden=(k == 0),
            last_only=True,
            attention_mask=attn,
            position_ids=pos,
        )
        pasts[k].absorb(returned)
        outs.append(o)
    logits = outs[0].logits[:, -1:]
    h = outs[0].hidden_states[-1][:, -1:]
    beta_logits = (
        outs[1].logits[:, -1:]
        if len(outs) > 1
        else (m.beta_head(h) if m.beta_head is not None else None)
    )
    guided, _, _ = dec._heads(logits, h, beta_logits)
    z = (guided[:, -1] / max(dec.temperature, 1e-6)).cpu()
    if dec.banned:
        z[:, dec.banned] = float("-inf")
    return z


def next_tokens(z: torch.Tensor, greedy: bool, generators: Sequence[torch.Generator]) -> list[int]:
    """One token per row of the scores ``z`` [R, V] (CPU), row r sampled with ``generators[r]``:
    the token ``torch.multinomial(torch.softmax(z[r], -1), 1, generator=generators[r])`` draws.

    That call draws q ~ Exp(1) per vocabulary entry from the generator and returns argmax p / q
    (PyTorch's one-sample path); here the softmax, the division and the argmax run once for all
    rows and only the draws stay per row, so a row's token and its generator's state are those of
    the one-row call (a test holds it to that) at a fraction of its cost."""
    if greedy:
        return z.argmax(dim=-1).tolist()
    p = torch.softmax(z, dim=-1)
    if not bool(torch.isfinite(p).all()):
        raise RuntimeError(
            "sampling scores with no finite token (every token banned or NaN scores)"
        )
    q = torch.empty_like(p)
    for row, g in zip(q, generators, strict=True):
        row.exponential_(1, generator=g)
    return (p / q).argmax(dim=-1).tolist()


def _drawn(
    dec, z: torch.Tensor, greedy: bool, generators, out_ids: list[list[int]], rows: list[int]
) -> list[int]:
    """Append each row's next token (row ``rows[j]`` from ``z[j]``, as :meth:`Decoder.sample` draws
    it) to its ``out_ids``; the rows that go on (no end of line, room left)."""
    going = []
    for i, t in zip(rows, next_tokens(z, greedy, [generators[i] for i in rows]), strict=True):
        out_ids[i].append(t)
        if t != dec.eos and len(out_ids[i]) < dec.max_new_tokens:
            going.append(i)
    return going


def _keep(states, rows, out_ids, kvs: dict[int, list]) -> None:
    """Remember, for the rows' next turn, the tokens they fed (prompt and all but the last drawn
    token) with their keys and values."""
    for i, kv in kvs.items():
        st = states[i]
        if st is None:
            continue
        fed = rows[i] + out_ids[i][:-1]
        ok = kv[0].shape[3] == len(fed)
        st.tokens = fed if ok else []
        st.kv = kv if ok else []


_PARAMS: dict[type, frozenset[str]] = {}


def _cached_step(lm, ids: torch.Tensor, cache, hidden: bool, last_only: bool = False, **extra):
    """One forward with a KV cache; transformers >= 5 calls it ``cache``, older ``past_key_values``.
    ``extra``: ``attention_mask`` (past and new tokens), ``position_ids`` (new tokens);
    ``last_only``: logits of the last position only (where the model can skip the others)."""
    if "attention_mask" in extra and "position_ids" in extra and fast_gpt2.supports(lm, cache):
        out = fast_gpt2.step(
            lm, ids, cache, extra["attention_mask"], extra["position_ids"], last_only
        )
        return out, out.cache
    params = _PARAMS.get(type(lm))
    if params is None:
        params = _PARAMS[type(lm)] = frozenset(inspect.signature(lm.forward).parameters)
    new_api = "cache" in params
    kw = {"cache": cache} if new_api else {"past_key_values": cache}
    if last_only and "logits_to_keep" in params:
        kw["logits_to_keep"] = 1
    out = lm(input_ids=ids, use_cache=True, output_hidden_states=hidden, **kw, **extra)
    nxt = out.get("cache") if new_api else out.get("past_key_values")
    return out, nxt
