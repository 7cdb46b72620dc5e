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
from training.tokenization import encode_many


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


def _kv_of(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per layer (K, V) [B, H, T, D] of a transformers cache."""
    layers = getattr(cache, "layers", None)
    if layers is not None and all(getattr(la, "keys", None) is not None for la in layers):
        return [(la.keys, la.values) for la in layers]
    keys, values = getattr(cache, "key_cache", None), getattr(cache, "value_cache", None)
    if keys is not None and values is not None:
        return list(zip(keys, values, strict=True))
    raise RuntimeError(f"batched decoding does not know this transformers cache ({type(cache).__name__})")


def _cache_from(kv: list[tuple[torch.Tensor, torch.Tensor]], room: int = 0):
    """A cache holding ``kv``, with ``room`` more tokens preallocated where transformers lets a
    cache layer be replaced (>= 5: no copy of the whole cache per generated token)."""
    from transformers import DynamicCache

    layer = _room_layer()
    if layer is not None:
        cache = DynamicCache()
        cache.layer_class_to_replicate = layer
        cache.layers = [layer(k, v, room) for k, v in kv]
        return cache
    if "ddp_cache_data" in inspect.signature(DynamicCache.__init__).parameters:
        return DynamicCache(ddp_cache_data=kv)
    return DynamicCache.from_legacy_cache(tuple(kv))


def _empty_cache():
    """A cache for a first forward (None: let the model make its own)."""
    from transformers import DynamicCache

    layer = _room_layer()
    if layer is None:
        return None
    cache = DynamicCache()
    cache.layer_class_to_replicate = layer
    return cache


_ROOM_LAYER: list = []


def _room_layer():
    """transformers' ``DynamicLayer`` growing into preallocated room instead of concatenating
    (None where transformers has no cache layers, before 5)."""
    if _ROOM_LAYER:
        return _ROOM_LAYER[0]
    try:
        from transformers.cache_utils import DynamicCache, DynamicLayer
    except ImportError:
        DynamicLayer = None  # noqa: N806
    if DynamicLayer is None or not hasattr(DynamicCache(), "layers"):
        _ROOM_LAYER.append(None)
        return None

    class RoomLayer(DynamicLayer):
        def __init__(self, keys: torch.Tensor | None = None, values: torch.Tensor | None = None,
                     room: int = 0) -> None:
            super().__init__()
            self.room, self.n = int(room), 0
            if keys is not None:
                self.lazy_initialization(keys, values)
                self._put(keys, values)

        def lazy_initialization(self, key_states, value_states) -> None:
            self.device, self.is_initialized = key_states.device, True
            b, h, t, d = key_states.shape
            self.buf_k = key_states.new_empty((b, h, t + self.room, d))
            self.buf_v = value_states.new_empty((b, h, t + self.room, value_states.shape[-1]))
            self.n = 0

        def _put(self, k, v):
            t = k.shape[-2]
            if self.n + t > self.buf_k.shape[2]:  # out of room: grow (a copy, as concatenation)
                more = max(t, self.buf_k.shape[2])
                self.buf_k = torch.cat([self.buf_k, self.buf_k.new_empty(self.buf_k.shape[:2] + (more,) +
                                                                          self.buf_k.shape[3:])], dim=2)
                self.buf_v = torch.cat([self.buf_v, self.buf_v.new_empty(self.buf_v.shape[:2] + (more,) +
                                                                          self.buf_v.shape[3:])], dim=2)
            self.buf_k[:, :, self.n: self.n + t] = k
            self.buf_v[:, :, self.n: self.n + t] = v
            self.n += t
            self.keys, self.values = self.buf_k[:, :, : self.n], self.buf_v[:, :, : self.n]

        def update(self, key_states, value_states, *args, **kwargs):
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            self._put(key_states, value_states)
            return self.keys, self.values

        def get_seq_length(self) -> int:
            return self.n if self.is_initialized else 0

        def batch_select_indices(self, indices: torch.Tensor) -> None:
            if self.is_initialized:
                self.buf_k, self.buf_v = self.buf_k[indices], self.buf_v[indices]
                self.keys, self.values = self.buf_k[:, :, : self.n], self.buf_v[:, :, : self.n]

    _ROOM_LAYER.append(RoomLayer)
    return RoomLayer


def _merge(kvs: Sequence[list[list[tuple[torch.Tensor, torch.Tensor]]]], lengths: Sequence[int], n_lms: int,
           dev, room: int = 0) -> tuple[list, torch.Tensor]:
    """Batch caches (one per LM) from per-row keys and values (their first ``lengths[i]``
    tokens), each row packed to the right; and the [B, width] mask of their real tokens."""
    wide = max(lengths)
    mask = torch.zeros((len(lengths), wide), dtype=torch.long)
    for i, c in enumerate(lengths):
        mask[i, wide - c:] = 1
    if wide == 0:
        return [_empty_cache() for _ in range(n_lms)], mask.to(dev)
    ref_row = next(i for i, c in enumerate(lengths) if c)
    pasts = []
    for k in range(n_lms):
        layers = []
        for layer, (ref, _) in enumerate(kvs[ref_row][k]):
            kk = ref.new_zeros((len(lengths), ref.shape[0], wide, ref.shape[2]))
            vv = torch.zeros_like(kk)
            for i, c in enumerate(lengths):
                if c:
                    kk[i, :, wide - c:] = kvs[i][k][layer][0][:, :c]
                    vv[i, :, wide - c:] = kvs[i][k][layer][1][:, :c]
            layers.append((kk.to(dev), vv.to(dev)))
        pasts.append(_cache_from(layers, room))
    return pasts, mask.to(dev)


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
def sample_batch(dec, prompts: Sequence[str], generators: Sequence[torch.Generator],
                 greedy: bool | None = None, states: Sequence[RowState | None] | None = None,
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
    n_new = [len(r) - c for r, c in zip(rows, reuse, strict=True)]
    out_ids: list[list[int]] = [[] for _ in range(b)]
    kv_rows: list = [None] * b  # each row's keys and values after its prompt
    z_rows: list = [None] * b
    for group in _groups(sorted(range(b), key=n_new.__getitem__), n_new):
        pasts, cmask = _merge([states[i].kv if reuse[i] else None for i in group], [reuse[i] for i in group],
                              len(lms), dev, room=max(n_new[i] for i in group))  # fmt: skip
        ids, attn = left_pad([rows[i][reuse[i]:] for i in group], dec.pad)
        width = ids.shape[1]
        pos = torch.zeros_like(ids)
        for j, i in enumerate(group):
            pos[j, width - n_new[i]:] = torch.arange(reuse[i], len(rows[i]))
        attn = torch.cat([cmask, attn.to(dev)], dim=1)
        z, pasts = _step(dec, lms, ids.to(dev), pasts, attn, pos.to(dev))
        per_lm = [_kv_of(p) for p in pasts]
        for j, i in enumerate(group):
            z_rows[i] = z[j]
            kv_rows[i] = _row_kv(per_lm, j, attn[j].bool())
    active = _drawn(dec, torch.stack(z_rows), greedy, generators, out_ids, list(range(b)))
    done = [i for i in range(b) if i not in set(active)]
    _keep(states, rows, out_ids, {i: kv_rows[i] for i in done})
    if active:
        pasts, attn = _merge([kv_rows[i] for i in active], [len(rows[i]) for i in active], len(lms), dev,
                             room=dec.max_new_tokens)  # fmt: skip
        pos = torch.tensor([[len(rows[i])] for i in active], dtype=torch.long, device=dev)
        for _ in range(dec.max_new_tokens - 1):
            step_ids = torch.tensor([[out_ids[i][-1]] for i in active], dtype=torch.long, device=dev)
            attn = torch.cat([attn, attn.new_ones((len(active), 1))], dim=1)
            z, pasts = _step(dec, lms, step_ids, pasts, attn, pos)
            going_rows = set(_drawn(dec, z, greedy, generators, out_ids, active))
            going = [j for j, i in enumerate(active) if i in going_rows]
            last = len(out_ids[active[0]]) >= dec.max_new_tokens
            if last or len(going) < len(active):  # rows that said "\n" leave, keeping their cache
                per_lm = [_kv_of(p) for p in pasts]
                leave = range(len(active)) if last else [j for j in range(len(active)) if j not in set(going)]
                _keep(states, rows, out_ids, {active[j]: _row_kv(per_lm, j, attn[j].bool()) for j in leave})
                if last or not going:
                    active = []
                    break
                sel = torch.tensor(going, dtype=torch.long, device=dev)
                pasts = [_select(p, sel) for p in pasts]
                attn, pos = attn[sel], pos[sel]
                active = [active[j] for j in going]
            pos = pos + 1
    texts = [dec.tok.decode(r, skip_special_tokens=False) for r in out_ids]
    return [t.removesuffix("\n") + "\n" for t in texts], [dec.eos not in r for r in out_ids]


def _step(dec, lms, ids, pasts, attn, pos):
    """One forward of every LM; (the rows' sampling scores [B, V] on the CPU, the new caches)."""
    m = dec.model
    outs, new = [], []
    for k, lm in enumerate(lms):
        o, p = _cached_step(lm, ids, pasts[k], hidden=(k == 0), last_only=True, attention_mask=attn,
                            position_ids=pos)  # fmt: skip
        outs.append(o)
        new.append(p)
    logits = outs[0].logits[:, -1:]
    h = outs[0].hidden_states[-1][:, -1:]
    beta_logits = outs[1].logits[:, -1:] if len(outs) > 1 else (
        m.beta_head(h) if m.beta_head is not None else None)
    guided, _, _ = dec._heads(logits, h, beta_logits)
    z = (guided[:, -1] / max(dec.temperature, 1e-6)).cpu()
    if dec.banned:
        z[:, dec.banned] = float("-inf")
    return z, new


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
        raise RuntimeError("sampling scores with no finite token (every token banned or NaN scores)")
    q = torch.empty_like(p)
    for row, g in zip(q, generators, strict=True):
        row.exponential_(1, generator=g)
    return (p / q).argmax(dim=-1).tolist()


def _drawn(dec, z: torch.Tensor, greedy: bool, generators, out_ids: list[list[int]], rows: list[int]) -> list[int]:
    """Append each row's next token (row ``rows[j]`` from ``z[j]``, as :meth:`Decoder.sample` draws
    it) to its ``out_ids``; the rows that go on (no end of line, room left)."""
    going = []
    for i, t in zip(rows, next_tokens(z, greedy, [generators[i] for i in rows]), strict=True):
        out_ids[i].append(t)
        if t != dec.eos and len(out_ids[i]) < dec.max_new_tokens:
            going.append(i)
    return going


def _row_kv(per_lm, j: int, mask: torch.Tensor):
    """Row ``j``'s attended keys and values, per LM and layer [H, T, D]."""
    return [[(k[j][:, mask], v[j][:, mask]) for k, v in kv] for kv in per_lm]


def _keep(states, rows, out_ids, kvs: dict[int, list]) -> None:
    """Remember, for the rows' next turn, the tokens they fed (prompt and all but the last drawn
    token) with their keys and values."""
    for i, kv in kvs.items():
        st = states[i]
        if st is None:
            continue
        fed = rows[i] + out_ids[i][:-1]
        ok = kv[0][0][0].shape[1] == len(fed)
        st.tokens = fed if ok else []
        st.kv = kv if ok else []


def _select(cache, sel: torch.Tensor):
    """The cache of the batch rows ``sel``."""
    if hasattr(cache, "batch_select_indices"):
        cache.batch_select_indices(sel)
        return cache
    return _cache_from([(k[sel], v[sel]) for k, v in _kv_of(cache)])


_PARAMS: dict[type, frozenset[str]] = {}


def _cached_step(lm, ids: torch.Tensor, cache, hidden: bool, last_only: bool = False, **extra):
    """One forward with a KV cache; transformers >= 5 calls it ``cache``, older ``past_key_values``.
    ``extra``: ``attention_mask`` (past and new tokens), ``position_ids`` (new tokens);
    ``last_only``: logits of the last position only (where the model can skip the others)."""
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
