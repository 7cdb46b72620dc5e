"""Answers as noisy evidence: what the askers believe once the oracle contradicts the question bank.

A person (or a model) as the oracle often disagrees with the embedded oracle's answers, which the
bank holds as the truth for every secret. :class:`Evidence` keeps a weight per secret instead of a
set of consistent ones:

* every reply that says something multiplies the weight of each secret by ``1 - ε`` when the
  secret's bank answer agrees with it and by ``ε`` when it disagrees (``ε`` = :data:`EPSILON`, the
  share of a person's answers assumed wrong); so a weight is ``∝ (ε / (1 - ε)) ** d``, ``d`` the
  number of replies the secret disagrees with, and no secret's weight ever reaches zero;
* a reply that says nothing is no evidence: ``"sometimes"``, ``"maybe"``, ``"no idea"``, ``"I don't
  know"``, a reply to a yes/no question that is neither yes nor no
  (:func:`envs.questions.text.reply_yes_no`; ``"Yes, usually."`` is yes), a free reply to an open
  question that shares no distinctive word with any of the bank's answers;
* a guessed secret is out (the episode would have ended had the guess been right).

The next question is the unasked one with the most expected information (the mutual information
between the secret and the reply, through a channel that gives a wrong answer with probability
``ε``); the asker guesses the most likely secret once its posterior reaches :data:`GUESS_AT`, or
on the last :data:`GUESS_LAST` questions of the episode, and a guessed secret is out. Questions
and guesses whose text was asked before are never asked again.

ε = 0.12 (the middle of 0.1 to 0.15, where the asker's win rate against a simulated person who is
wrong 15 % or 30 % of the time was flat; ``experiments/noisy_oracle.py``).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from envs.core import Text
from envs.questions.task import history_pairs


class Bank(Protocol):
    """What :class:`Evidence` reads of a :class:`envs.questions.policies.QuestionBank`
    (read-only, so the bank's lists and dicts fit the sequences and mappings here)."""

    @property
    def n(self) -> int: ...
    @property
    def full(self) -> int: ...
    @property
    def questions(self) -> Sequence[Any]: ...
    @property
    def index(self) -> Mapping[str, int]: ...
    @property
    def informative(self) -> Sequence[int]: ...

    def evidence(self, qi: int, reply: str) -> int | None: ...


EPSILON = 0.12
"""The assumed share of wrong answers: each reply multiplies a disagreeing secret's weight by ε and
an agreeing one's by 1 − ε."""
GUESS_AT = 0.35
"""Guess the most likely secret once its posterior probability reaches this."""
GUESS_LAST = 2
"""On the last this many questions, guess the most likely secret whatever its posterior."""
NEGLIGIBLE = 1e-9
"""Secrets weighing less than this (relative to the heaviest) are left out of the sums."""


def _h2(p: float) -> float:
    return 0.0 if p <= 0.0 or p >= 1.0 else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


class Evidence:
    """The weighted candidates after a dialogue (module docstring)."""

    def __init__(self, bank: Bank, history: Sequence[Text], eps: float = EPSILON) -> None:
        self.bank, self.eps = bank, eps
        self.asked: set[str] = set()
        dis = [0] * bank.n
        alive = bank.full
        for question, reply in history_pairs(history):
            self.asked.add(question)
            qi = bank.index.get(question)
            if qi is None:
                continue
            guess = bank.questions[qi].guess
            if guess is not None:
                alive &= ~(1 << guess)
                continue
            agree = bank.evidence(qi, reply)
            if agree is None:
                continue
            rest = bank.full & ~agree
            while rest:
                low = rest & -rest
                dis[low.bit_length() - 1] += 1
                rest ^= low
        self.alive = alive
        self.dis = dis
        ratio = eps / (1 - eps)
        by_d: dict[int, int] = {}
        for s in range(bank.n):
            if alive >> s & 1:
                by_d[dis[s]] = by_d.get(dis[s], 0) | (1 << s)
        best = min(by_d, default=0)
        # (relative weight, secrets) per number of disagreements, heaviest first
        self.groups = [(ratio ** (d - best), by_d[d]) for d in sorted(by_d)]
        self.live = [(w, m) for w, m in self.groups if w >= NEGLIGIBLE]
        self.total = sum(w * m.bit_count() for w, m in self.groups)
        self.live_total = sum(w * m.bit_count() for w, m in self.live)

    def top(self) -> tuple[int | None, float]:
        """The most likely secret (the lowest index among equals) and its posterior."""
        if not self.groups:
            return None, 0.0
        w, m = self.groups[0]
        return (m & -m).bit_length() - 1, w / self.total

    def sample(self, rng: random.Random) -> int | None:
        """A secret drawn by its posterior (None when every secret was guessed)."""
        x = rng.random() * self.total
        last = None
        for w, m in self.groups:
            k = m.bit_count()
            if x < w * k:
                return self._nth(m, int(x / w))
            x -= w * k
            last = m
        return None if last is None else (last & -last).bit_length() - 1

    @staticmethod
    def _nth(mask: int, i: int) -> int:
        for _ in range(i):
            mask &= mask - 1
        return (mask & -mask).bit_length() - 1

    def unguessed(self) -> list[int]:
        """Every secret not guessed yet, in index order."""
        return [s for s in range(self.bank.n) if self.alive >> s & 1]

    def unasked(self) -> list[int]:
        """The bank's informative questions whose text was not asked yet."""
        return [
            qi for qi in self.bank.informative if self.bank.questions[qi].text not in self.asked
        ]

    def gain(self, qi: int) -> float:
        """Expected information (bits) of question ``qi``'s reply about the secret."""
        masks = self.bank.questions[qi].masks
        k = len(masks)
        if k < 2 or not self.live:
            return 0.0
        live = self.live
        pis = [sum(w * (mask & m).bit_count() for w, m in live) / self.live_total for mask in masks]
        e = self.eps
        if k == 2:
            return _h2(pis[1] * (1 - e) + pis[0] * e) - _h2(e)
        spread = e / (k - 1)
        h_obs = 0.0
        for pi in pis:
            o = (1 - e) * pi + spread * (1 - pi)
            if o > 0:
                h_obs -= o * math.log2(o)
        return h_obs - (_h2(e) + e * math.log2(k - 1))

    def best_question(self) -> int | None:
        """The unasked informative question with the most expected information (None: none
        tells anything more)."""
        best, best_gain = None, 1e-9
        for qi in self.unasked():
            g = self.gain(qi)
            if g > best_gain:
                best, best_gain = qi, g
        return best
