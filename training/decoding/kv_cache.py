"""KV caches for batched decoding (:mod:`training.decoding.free_text`, issue #12).

:class:`RowsCache` keeps the keys and values of every layer of one language model in a single
tensor ``buf`` [2 (keys, values), layers, rows, heads, capacity, head dim], filled up to ``n``
tokens. What batched decoding does between forwards then costs one tensor operation for all
layers: taking a row's attended tokens out (:meth:`RowsCache.row`), packing rows into a new batch
(:meth:`RowsCache.merge`), keeping some rows (:meth:`RowsCache.select`). Where transformers has
cache layers (>= 4.56) the model writes each forward's keys and values straight into ``buf``
(:meth:`RowsCache.model_cache`, no copy of the cache per token); with older versions the cache
transformers returns is stacked back into ``buf`` after each forward (:meth:`RowsCache.absorb`).

:func:`kv_of` and :func:`cache_from` convert between transformers caches and per-layer (K, V)
lists for the scoring passes of :class:`training.decoding.decoder.Decoder`.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence

import torch


def kv_of(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per layer (K, V) [B, H, T, D] of a transformers cache."""
    layers = getattr(cache, "layers", None)
    if layers is not None and all(getattr(la, "keys", None) is not None for la in layers):
        return [(la.keys, la.values) for la in layers]
    keys, values = getattr(cache, "key_cache", None), getattr(cache, "value_cache", None)
    if keys is not None and values is not None:
        return list(zip(keys, values, strict=True))
    raise RuntimeError(
        f"batched decoding does not know this transformers cache ({type(cache).__name__})"
    )


SCRATCH_BYTES = 512 * 2**20
"""The largest cache :func:`cache_from` keeps for reuse (a larger one, e.g. a 135M-parameter model's
for hundreds of actions, is made afresh each time rather than held between turns)."""


def cache_from(
    kv: list[tuple[torch.Tensor, torch.Tensor]],
    room: int = 0,
    rows: Sequence[int] | None = None,
    scratch: list | None = None,
):
    """A transformers cache holding ``kv`` (with ``rows``: its row ``rows[r]`` as row r, the copies
    made straight into the cache), with room for ``room`` more tokens.

    ``scratch`` (a list the caller keeps, empty at first) holds the memory the cache is built in,
    reused by the next call, up to ``SCRATCH_BYTES``: a reranking pass builds one such cache per
    prompt, hundreds of megabytes, and fresh memory that large costs the kernel's page faults each
    time (a third of the pass with the tiny model)."""
    b, h, t, d = kv[0][0].shape
    rows = list(range(b)) if rows is None else [int(r) for r in rows]
    shape = (2, len(kv), len(rows), h, t + room, d)
    n = math.prod(shape)
    if scratch is None or n * kv[0][0].element_size() > SCRATCH_BYTES:
        buf = kv[0][0].new_empty(shape)
    else:
        if (
            not scratch
            or scratch[0].numel() < n
            or scratch[0].dtype != kv[0][0].dtype
            or scratch[0].device != kv[0][0].device
        ):
            scratch[:] = [kv[0][0].new_empty(n)]
        buf = scratch[0][:n].view(shape)
    runs = []  # (first row, end, source row): runs of rows copying one source row
    for r, src in enumerate(rows):
        if runs and runs[-1][2] == src:
            runs[-1][1] = r + 1
        else:
            runs.append([r, r + 1, src])
    for i, (k, v) in enumerate(kv):
        for a, e, src in runs:
            buf[0, i, a:e, :, :t] = k[src : src + 1]
            buf[1, i, a:e, :, :t] = v[src : src + 1]
    return RowsCache(buf, t, room).model_cache()


def _has_layers() -> bool:
    if not _HAS_LAYERS:
        try:
            from transformers.cache_utils import DynamicCache, DynamicLayer  # noqa: F401

            _HAS_LAYERS.append(hasattr(DynamicCache(), "layers"))
        except ImportError:
            _HAS_LAYERS.append(False)
    return _HAS_LAYERS[0]


_HAS_LAYERS: list[bool] = []


class RowsCache:
    """One language model's cached keys and values for a batch of rows (see the module)."""

    def __init__(
        self, buf: torch.Tensor | None, n: int = 0, room: int = 0, n_layers: int = 0
    ) -> None:
        self.buf, self.n, self.room = buf, int(n), int(room)
        self.n_layers = int(buf.shape[1]) if buf is not None else int(n_layers)
        self._model_cache = None

    # -- building and reading -------------------------------------------------------------------
    @classmethod
    def merge(
        cls,
        rows: Sequence[torch.Tensor | None],
        lengths: Sequence[int],
        n_layers: int,
        room: int = 0,
        device=None,
    ) -> RowsCache:
        """Rows' keys and values ([2, layers, heads, >= length, head dim], their first ``lengths[i]``
        tokens) in one batch, each packed to the right of the widest, with ``room`` tokens to grow."""
        wide = max(lengths)
        if wide == 0:
            return cls(None, 0, room, n_layers)
        ref = next(r for r, c in zip(rows, lengths, strict=True) if c)
        two, layers, heads, _, dim = ref.shape
        buf = ref.new_zeros((two, layers, len(lengths), heads, wide + room, dim), device=device)
        for i, (r, c) in enumerate(zip(rows, lengths, strict=True)):
            if c:
                buf[:, :, i, :, wide - c : wide] = r[:, :, :, :c]
        return cls(buf, wide, room)

    def row(self, j: int, spans: Sequence[tuple[int, int]]) -> torch.Tensor:
        """Row ``j``'s tokens in the column ranges ``spans`` (its real tokens), as a new tensor
        [2, layers, heads, tokens, head dim]."""
        parts = [self.buf[:, :, j, :, a:b] for a, b in spans if b > a]
        return torch.cat(parts, dim=3) if len(parts) > 1 else parts[0].clone()

    def select(self, sel: torch.Tensor) -> RowsCache:
        """Only the rows ``sel`` (in that order)."""
        if self.buf is not None:
            self.buf = self.buf[:, :, sel]
            self._model_cache = None
        return self

    # -- the model's side -----------------------------------------------------------------------
    def model_cache(self):
        """The cache to hand the model for its next forward (then call :meth:`absorb`)."""
        if _has_layers():
            if self._model_cache is None:
                self._model_cache = _shared_cache(self)
            return self._model_cache
        from transformers import DynamicCache

        if self.buf is None:
            return None
        kv = [
            (self.buf[0, i, :, :, : self.n], self.buf[1, i, :, :, : self.n])
            for i in range(self.n_layers)
        ]
        if "ddp_cache_data" in inspect.signature(DynamicCache.__init__).parameters:
            return DynamicCache(ddp_cache_data=kv)
        return DynamicCache.from_legacy_cache(tuple(kv))

    def absorb(self, returned) -> RowsCache:
        """Take in the cache a forward returned."""
        if returned is not None and returned is self._model_cache:
            self.n = returned.layers[0].n
            return self
        kv = kv_of(returned)
        self.buf = torch.stack([torch.stack([k for k, _ in kv]), torch.stack([v for _, v in kv])])
        self.n, self.n_layers, self._model_cache = kv[0][0].shape[2], len(kv), None
        return self

    def _room_for(self, keys: torch.Tensor, values: torch.Tensor, upto: int) -> None:
        """Allocate ``buf`` (first forward) or grow it (a forward longer than the room)."""
        if keys.shape != values.shape:
            raise RuntimeError("batched decoding needs keys and values of one shape")
        b, h, _, d = keys.shape
        if self.buf is None:
            self.buf = keys.new_zeros((2, self.n_layers, b, h, upto + self.room, d))
        elif upto > self.buf.shape[4]:
            more = max(upto - self.buf.shape[4], self.buf.shape[4])
            self.buf = torch.cat(
                [self.buf, self.buf.new_zeros(self.buf.shape[:4] + (more, d))], dim=4
            )


def _shared_cache(owner: RowsCache):
    """A transformers ``DynamicCache`` whose layers write into ``owner.buf``."""
    if not _CLASSES:
        _CLASSES.extend(_shared_classes())
    layer_class, cache_class = _CLASSES
    cache = cache_class()
    cache.owner = owner
    cache.layers = [layer_class(owner, i) for i in range(owner.n_layers)]
    cache.layer_class_to_replicate = None
    return cache


_CLASSES: list = []


def _shared_classes() -> tuple[type, type]:
    from transformers.cache_utils import DynamicCache, DynamicLayer

    class SharedLayer(DynamicLayer):
        def __init__(self, owner: RowsCache, index: int) -> None:
            super().__init__()
            self.owner, self.index, self.n = owner, index, owner.n
            if owner.buf is not None:
                self.device, self.is_initialized = owner.buf.device, True
                self._view()

        def _view(self) -> None:
            self.keys = self.owner.buf[0, self.index, :, :, : self.n]
            self.values = self.owner.buf[1, self.index, :, :, : self.n]

        def lazy_initialization(self, key_states, value_states) -> None:
            self.owner._room_for(key_states, value_states, key_states.shape[-2])
            self.device, self.is_initialized = key_states.device, True

        def update(self, key_states, value_states, *args, **kwargs):
            t = key_states.shape[-2]
            self.owner._room_for(key_states, value_states, self.n + t)
            self.device, self.is_initialized = key_states.device, True
            buf = self.owner.buf
            buf[0, self.index, :, :, self.n : self.n + t] = key_states
            buf[1, self.index, :, :, self.n : self.n + t] = value_states
            self.n += t
            self._view()
            return self.keys, self.values

        def get_seq_length(self) -> int:
            return self.n

    class SharedCache(DynamicCache):
        def batch_select_indices(self, indices: torch.Tensor) -> None:
            self.owner.select(indices)
            for la in self.layers:
                la._view()

    return SharedLayer, SharedCache
