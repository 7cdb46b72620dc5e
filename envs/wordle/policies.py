"""Scripted Wordle policies: LMRL-Gym's data recipe (behaviour) and greedy information gain (strong).

Both read the task's consistent-answer bitset (like the maze policies read the agent's cell), so
they cost microseconds per move instead of re-filtering the word list.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from envs.core import Text
from envs.wordle.engine import (
    Vocab,
    expected_log_remaining,
    nth_set_bit,
    partition_sizes,
    set_bits,
)

_BEST_CACHE: dict[tuple[Vocab, str, int], tuple[int, ...]] = {}
_BEST_CACHE_LIMIT = 200_000


def _canonical(word: str) -> str:
    return " ".join(word) + "\n"


class _WordlePolicy:
    kind = "scripted"
    name = "wordle"

    def __init__(self) -> None:
        self._task: Any = None
        self._rng = random.Random()

    def reset(self, task: Any, seed: int | None = None) -> None:
        if not isinstance(getattr(task, "vocab", None), Vocab) or not hasattr(task, "consistent"):
            raise TypeError("Wordle policies play Wordle tasks only")
        self._task = task
        # A stream independent of the answer draw (which uses random.Random(seed)).
        self._rng = random.Random(None if seed is None else seed * 7919 + 29)

    def _vocab(self) -> Vocab:
        assert self._task is not None, "reset() the policy with its task first"
        return self._task.vocab

    def _random_consistent(self) -> str:
        vocab, mask = self._vocab(), self._task.consistent
        n = mask.bit_count()
        if not n:
            return vocab.answers[self._rng.randrange(vocab.size)]
        return vocab.answers[nth_set_bit(mask, self._rng.randrange(n))]


class RandomMixturePolicy(_WordlePolicy):
    """LMRL-Gym's ``RandomMixturePolicy``: with ``prob_smart`` a random word still consistent with
    the feedback, else a random word from the answer list (LMRL's whole vocabulary).

    ``prob_smart=0.33`` on LMRL's 431-word list reproduces its dataset (success ~0.70, mean return
    ~-4.12).
    """

    name = "behaviour"

    def __init__(self, prob_smart: float = 0.33) -> None:
        super().__init__()
        self.prob_smart = float(prob_smart)

    def act(self, history: Sequence[Text]) -> str:
        if self._rng.random() < self.prob_smart:
            return _canonical(self._random_consistent())
        vocab = self._vocab()
        return _canonical(vocab.answers[self._rng.randrange(vocab.size)])


class ConsistentPolicy(RandomMixturePolicy):
    """Every guess a random answer still consistent with the feedback (``prob_smart`` 1): a
    player that uses all the feedback but plans nothing. Its games (mean return about -2.3 on
    ``words=small``) are the data the Wordle BC-then-online recipe of ``docs/notes/wordle.md``
    starts from."""

    name = "consistent"

    def __init__(self) -> None:
        super().__init__(prob_smart=1.0)


def best_guesses(vocab: Vocab, rule: str, mask: int) -> tuple[int, ...]:
    """Answer indices (among ``mask``) that maximise the expected information gain.

    LMRL-Gym's ``OptimalPolicy``: candidates are the consistent answers; the score is the mean
    log-size of the set that remains after the feedback. Results are cached per position.
    """
    key = (vocab, rule, mask)
    hit = _BEST_CACHE.get(key)
    if hit is not None:
        return hit
    candidates = set_bits(mask)
    if len(candidates) <= 2:
        best = tuple(candidates)
    else:
        total = len(candidates)
        scores = []
        for k in candidates:
            sizes = partition_sizes(mask, vocab.split_factors(vocab.answers[k], rule))
            scores.append(expected_log_remaining(sizes, total))
        low = min(scores)
        best = tuple(k for k, s in zip(candidates, scores, strict=True) if s <= low + 1e-12)
    if len(_BEST_CACHE) >= _BEST_CACHE_LIMIT:
        _BEST_CACHE.clear()
    _BEST_CACHE[key] = best
    return best


class InfoGainPolicy(_WordlePolicy):
    """Greedy expected information gain over the consistent answers (the normalised score's max).

    Ties are broken at random (seeded), as in LMRL-Gym. The opening move costs a fraction of a
    second once per word list and rule; later moves are cached too.
    """

    name = "strong"

    def act(self, history: Sequence[Text]) -> str:
        task = self._task
        assert task is not None, "reset() the policy with its task first"
        best = best_guesses(task.vocab, task.rule, task.consistent)
        if not best:
            return self._random_consistent()
        return _canonical(task.vocab.answers[self._rng.choice(best)])


POLICIES = {
    "behaviour": RandomMixturePolicy,
    "strong": InfoGainPolicy,
    "consistent": ConsistentPolicy,
}
