"""Scripted guessers for the question tasks, built on a question bank.

A :class:`QuestionBank` holds fixed questions and, for every possible secret, the embedded oracle's
answer to each; answers are grouped into classes (yes/no, or one class per distinct open answer)
kept as bit masks over the secrets. An asker reads the dialogue from the history only (so it also
works against a person or a model as the oracle), keeps the secrets consistent with the answers,
and picks its next question:

* ``strong``: the question that best splits the remaining candidates (smallest expected number
  left), guessing once at most three candidates remain: the normalised score's max.
* ``behaviour``: LMRL-like data: an informative question with probability ``p_informative``, a
  premature guess at a random candidate with ``p_guess``, otherwise a random question from the
  bank; it guesses when few candidates remain, like the strong asker. With ``guess_after`` it
  only asks (informative or random questions) until that many questions were asked, then
  guesses random candidates (LMRL's Guess My City askers named a city only near the end), or
  with probability ``p_slip`` any secret at all.
* ``random``: a uniformly random bank question (guesses included) each turn.

Answers that match no class (a person's free reply) narrow nothing; answers that would leave no
candidate (an inconsistent oracle) are ignored.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from envs.core import Text
from envs.questions.task import history_pairs
from envs.questions.text import fold, tokens, yes_no


@dataclass(frozen=True)
class BankQuestion:
    text: str
    """The question as the asker sends it (ends in ``"\\n"``)."""
    yesno: bool
    masks: tuple[int, ...]
    """Secrets per answer class (for yes/no questions: index 0 = no, 1 = yes)."""
    answers: tuple[str, ...]
    """The embedded oracle's answer text per class (folded)."""
    guess: int | None = None
    """The secret this question guesses, if it is a guess."""


class QuestionBank:
    """Fixed questions with the embedded oracle's answers for every secret, as bit masks."""

    def __init__(
        self,
        n_secrets: int,
        questions: Sequence[tuple[str, int | None]],
        answer: Callable[[str, int], str],
    ) -> None:
        self.n = n_secrets
        self.full = (1 << n_secrets) - 1
        self.questions: list[BankQuestion] = []
        for text, guess in questions:
            per = [fold(answer(text, s)).strip() for s in range(n_secrets)]
            if all(yes_no(a) is not None and len(a) <= 4 for a in per):
                yes = sum(1 << s for s, a in enumerate(per) if yes_no(a))
                self.questions.append(
                    BankQuestion(text, True, (self.full & ~yes, yes), ("no.", "yes."), guess)
                )
                continue
            classes: dict[str, int] = {}
            for s, a in enumerate(per):
                classes[a] = classes.get(a, 0) | (1 << s)
            self.questions.append(
                BankQuestion(text, False, tuple(classes.values()), tuple(classes), guess)
            )
        self.index = {q.text: i for i, q in enumerate(self.questions)}
        self.guesses = {q.guess: i for i, q in enumerate(self.questions) if q.guess is not None}
        self.informative = [i for i, q in enumerate(self.questions) if q.guess is None]

    def consistent(self, qi: int, reply: str) -> int:
        """The secrets consistent with ``reply`` to question ``qi`` (all of them if unreadable)."""
        q = self.questions[qi]
        if q.yesno:
            yn = yes_no(reply)
            return self.full if yn is None else q.masks[int(yn)]
        folded = fold(reply).strip()
        for ans, mask in zip(q.answers, q.masks, strict=True):
            if ans == folded:
                return mask
        # A free reply: keep the classes sharing the most distinctive words with it.
        words = set(tokens(reply))
        common = set.intersection(*(set(tokens(a)) for a in q.answers)) if q.answers else set()
        best, out = 0, 0
        for ans, mask in zip(q.answers, q.masks, strict=True):
            score = len((set(tokens(ans)) - common) & words)
            if score > best:
                best, out = score, mask
            elif score == best and score > 0:
                out |= mask
        return out if best > 0 else self.full

    def candidates(self, history: Sequence[Text]) -> tuple[int, set[int]]:
        """Secrets consistent with the dialogue so far, and the bank questions already asked."""
        mask = self.full
        asked: set[int] = set()
        for question, reply in history_pairs(history):
            qi = self.index.get(question)
            if qi is None:
                continue
            asked.add(qi)
            narrowed = mask & self.consistent(qi, reply)
            if narrowed:
                mask = narrowed
        return mask, asked

    def best_split(self, mask: int, asked: set[int]) -> int | None:
        """The unasked question leaving the fewest candidates on average (None: none splits)."""
        n = mask.bit_count()
        best, best_cost = None, n * n
        for qi in self.informative:
            if qi in asked:
                continue
            cost = 0
            for m in self.questions[qi].masks:
                k = (mask & m).bit_count()
                cost += k * k
            if cost < best_cost:
                best, best_cost = qi, cost
        return best


def bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class BankAsker:
    """A scripted guesser over a :class:`QuestionBank` (see the module docstring)."""

    kind = "scripted"
    name = "strong"

    def __init__(
        self,
        bank: Callable[[], QuestionBank],
        *,
        p_informative: float = 1.0,
        p_guess: float = 0.0,
        guess_at: int = 3,
        guess_after: int | None = None,
        p_slip: float = 0.0,
        uniform: bool = False,
        name: str | None = None,
    ) -> None:
        self._bank_fn = bank
        self._bank: QuestionBank | None = None
        self.p_informative = p_informative
        self.p_guess = p_guess
        self.guess_at = guess_at
        self.guess_after = guess_after
        self.p_slip = p_slip
        self.uniform = uniform
        if name:
            self.name = name
        if uniform:
            self.kind = "random"
        self._rng = random.Random()

    def reset(self, task: Any, seed: int | None = None) -> None:
        self._bank = self._bank_fn()
        # A different stream from the secret's draw, so the two are independent.
        self._rng = random.Random(None if seed is None else seed * 7919 + 17)

    def act(self, history: Sequence[Text]) -> str:
        if self._bank is None:
            self._bank = self._bank_fn()
        bank, rng = self._bank, self._rng
        if self.uniform:
            return rng.choice(bank.questions).text
        mask, asked = bank.candidates(history)
        cands = bits(mask)
        u = rng.random()
        if self.guess_after is not None:
            if len(history_pairs(history)) >= self.guess_after:
                if rng.random() < self.p_slip:  # a careless guess at any secret
                    return self._guess(rng.randrange(bank.n), asked)
                return self._guess(rng.choice(cands), asked)
            qi = bank.best_split(mask, asked) if u < self.p_informative else None
            if qi is None:
                pool = [q for q in bank.informative if q not in asked] or bank.informative
                qi = rng.choice(pool)
            return bank.questions[qi].text
        if len(cands) > self.guess_at and u >= self.p_informative:
            if u < self.p_informative + self.p_guess:
                return self._guess(rng.choice(cands), asked)
            pool = [qi for qi in bank.informative if qi not in asked] or bank.informative
            return bank.questions[rng.choice(pool)].text
        qi = bank.best_split(mask, asked) if len(cands) > self.guess_at else None
        if qi is not None:
            return bank.questions[qi].text
        unguessed = [c for c in cands if bank.guesses.get(c) not in asked] or cands
        return self._guess(unguessed[0], asked)

    def _guess(self, secret: int, asked: set[int]) -> str:
        bank = self._bank
        assert bank is not None
        return bank.questions[bank.guesses[secret]].text
