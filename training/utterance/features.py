"""What the utterance-level model reads: a dialogue as turns, each turn as hashed features.

A *turn* is what the agent said and what came back (the partner's reply, or the task's
observation); the task's opening text is turn 0, said to an agent that has not spoken yet. A
turn's features are its words (unigrams and bigrams) on each side and, so that an answer is read
*as the answer to its question*, the pairs of (the whole utterance, a reply word) and of (an
utterance word, a reply word). A candidate utterance's features are its words, bigrams and the
whole line. Every feature is hashed (CRC-32, stable across processes) into ``BUCKETS`` rows of an
embedding table; torch-free, so the data can be read without it.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from functools import lru_cache

BUCKETS = 1 << 18
"""Rows of the hashed embedding tables (collisions are rare at the dialogue tasks' vocabulary)."""

_TOKEN = re.compile(r"[a-z]+|\d[\d,.]*\d|\d")
_STOP = frozenset(
    "the a an is it in of to do does there your you are what which that this be".split()
)

Turn = tuple[str, str]
"""(what the agent said, what came back); ``("", opening text)`` for the task's opening."""


def tokens(text: str) -> list[str]:
    """Lower-case words and numbers (``$29,500`` -> ``29,500``)."""
    return _TOKEN.findall(text.lower())


def _hash(feature: str) -> int:
    return zlib.crc32(feature.encode("utf-8")) % BUCKETS


def _grams(prefix: str, toks: Sequence[str]) -> Iterable[str]:
    yield from (f"{prefix}:{t}" for t in toks)
    yield from (f"{prefix}2:{a} {b}" for a, b in zip(toks, toks[1:], strict=False))


@lru_cache(maxsize=1 << 16)
def turn_features(said: str, reply: str) -> tuple[int, ...]:
    """The hashed features of one turn (cached: the dialogue tasks repeat their turns a lot)."""
    said_toks, reply_toks = tokens(said), tokens(reply)
    whole = " ".join(said_toks)
    content = [t for t in said_toks if t not in _STOP] or said_toks
    feats = [*_grams("u", said_toks), *_grams("r", reply_toks)]
    feats += [f"x:{whole}|{w}" for w in reply_toks[:24]]
    feats += [f"y:{a}|{b}" for a in content[:8] for b in reply_toks[:12]]
    if not reply_toks:
        feats.append(f"x:{whole}|<none>")
    return tuple(sorted({_hash(f) for f in feats})) or (0,)


@lru_cache(maxsize=1 << 16)
def candidate_features(utterance: str) -> tuple[int, ...]:
    """The hashed features of a candidate utterance: its words, bigrams and the whole line."""
    toks = tokens(utterance)
    feats = [*_grams("c", toks), "C:" + " ".join(toks)]
    return tuple(sorted({_hash(f) for f in feats}))


def dialogue_turns(opening: str, pairs: Sequence[tuple[str, str]]) -> list[Turn]:
    """Turn 0 (the opening) and one turn per (action, the text that followed it)."""
    return [("", opening), *((a, o) for a, o in pairs)]
