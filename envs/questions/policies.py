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
* ``random``: a uniformly random bank question (guesses included) each turn (with any oracle but
  the embedded one, one not asked yet).

While every reply is a plain bank answer and some secret agrees with all of them (always, against
the embedded oracle), an asker keeps the consistent secrets as above; this is the data recipe, and
its random draws stay as they were. Once a reply contradicts every remaining secret, or says
something else (a person's "sometimes", a free sentence), it listens instead: answers become noisy
evidence over weighted secrets (:mod:`envs.questions.engine`), the same recipe runs over those
weights, and its questions are chosen by expected information. With any oracle but the embedded
one an asker never asks the same question twice in an episode (guesses included); against the
embedded one the recipe is kept as it was (every bank question has its own text).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from envs.core import Text
from envs.questions.engine import GUESS_AT, GUESS_LAST, Evidence
from envs.questions.task import history_pairs
from envs.questions.text import fold, reply_yes_no, tokens, vague, yes_no


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

    def evidence(self, qi: int, reply: str) -> int | None:
        """The secrets whose bank answer to question ``qi`` agrees with ``reply``, or None when
        the reply says nothing (see :mod:`envs.questions.engine`)."""
        q = self.questions[qi]
        if q.yesno:
            yn = reply_yes_no(reply)
            return None if yn is None else q.masks[int(yn)]
        if vague(reply):
            return None
        mask = self.consistent(qi, reply)
        return None if mask in (0, self.full) else mask

    def settled(self, history: Sequence[Text]) -> bool:
        """Whether every reply so far is a plain bank answer (yes/no to a yes/no question, one of
        the answers to an open one) and some secret agrees with all of them: the embedded oracle's
        replies always are, and then the askers play as they always did."""
        mask = self.full
        for question, reply in history_pairs(history):
            qi = self.index.get(question)
            if qi is None:
                continue
            q = self.questions[qi]
            if q.yesno:
                yn = yes_no(reply)
                if yn is None or reply_yes_no(reply) is not yn:
                    return False
                mask &= q.masks[int(yn)]
            else:
                folded = fold(reply).strip()
                if folded not in q.answers:
                    return False
                mask &= q.masks[q.answers.index(folded)]
            if not mask:
                return False
        return True

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
        self._embedded = False
        self._max_questions = 20

    def prepare(self) -> None:
        """Build the question bank now (the first time in a process: every bank question asked of
        every secret, about a second), so that ``reset`` is quick; the app calls it off the UI
        thread before an episode with this asker starts."""
        self._bank = self._bank_fn()

    def reset(self, task: Any, seed: int | None = None) -> None:
        self._bank = self._bank_fn()
        # A different stream from the secret's draw, so the two are independent.
        self._rng = random.Random(None if seed is None else seed * 7919 + 17)
        label = getattr(task, "partner_label", None)
        self._embedded = callable(label) and label() == "embedded"
        self._max_questions = int(getattr(task, "max_questions", 20))

    def act(self, history: Sequence[Text]) -> str:
        if self._bank is None:
            self._bank = self._bank_fn()
        bank = self._bank
        asked = {q for q, _ in history_pairs(history)}
        if self.uniform and not self._embedded:
            pool = [q for q in bank.questions if q.text not in asked] or bank.questions
            return self._rng.choice(pool).text
        if self.uniform or bank.settled(history):
            text = self._settled(history)
            # Against the embedded oracle the data recipe stands as it was, with its rare repeats
            # (two bank questions of Guess My City share a text); with anyone else, never.
            if self._embedded or text not in asked:
                return text
        text = self._listen(history)
        if text in asked:  # not expected: every choice of _listen is a text not asked yet
            pool = [q for q in bank.questions if q.text not in asked] or bank.questions
            text = pool[0].text
        return text

    def _settled(self, history: Sequence[Text]) -> str:
        """The asker's play while every reply agrees with the bank (the askers' original code:
        its random draws, in their order, make the generated datasets)."""
        bank, rng = self._bank, self._rng
        assert bank is not None
        if self.uniform:
            return rng.choice(bank.questions).text
        mask, asked = bank.candidates(history)
        cands = bits(mask)
        u = rng.random()
        if self.guess_after is not None:
            if len(history_pairs(history)) >= self.guess_after:
                if rng.random() < self.p_slip:  # a careless guess at any secret
                    return self._guess(rng.randrange(bank.n))
                return self._guess(rng.choice(cands))
            qi = bank.best_split(mask, asked) if u < self.p_informative else None
            if qi is None:
                pool = [q for q in bank.informative if q not in asked] or bank.informative
                qi = rng.choice(pool)
            return bank.questions[qi].text
        if len(cands) > self.guess_at and u >= self.p_informative:
            if u < self.p_informative + self.p_guess:
                return self._guess(rng.choice(cands))
            pool = [qi for qi in bank.informative if qi not in asked] or bank.informative
            return bank.questions[rng.choice(pool)].text
        qi = bank.best_split(mask, asked) if len(cands) > self.guess_at else None
        if qi is not None:
            return bank.questions[qi].text
        unguessed = [c for c in cands if bank.guesses.get(c) not in asked] or cands
        return self._guess(unguessed[0])

    def _listen(self, history: Sequence[Text]) -> str:
        """The asker's play once a reply contradicts the bank: the same recipe over weighted
        candidates (:class:`envs.questions.engine.Evidence`), never asking a question twice.
        "Few candidates left" becomes "one secret dominates" (posterior ≥ ``GUESS_AT``), a guess
        at a random candidate is a secret drawn by its posterior, a random question an unasked
        one, a slip any secret not guessed yet; the strong choice is :meth:`_best`."""
        bank, rng = self._bank, self._rng
        assert bank is not None
        ev = Evidence(bank, history)
        n_asked = len(history_pairs(history))
        u = rng.random()
        if self.guess_after is not None:
            if n_asked >= self.guess_after:
                if rng.random() < self.p_slip:  # a careless guess at any secret not guessed yet
                    pick = ev.unguessed()
                    return self._guess(rng.choice(pick)) if pick else self._best(ev, n_asked)
                s = ev.sample(rng)
                return self._guess(s) if s is not None else self._best(ev, n_asked)
            qi = ev.best_question() if u < self.p_informative else None
            pool = ev.unasked()
            if qi is None and pool:
                qi = rng.choice(pool)
            return bank.questions[qi].text if qi is not None else self._best(ev, n_asked)
        if ev.top()[1] < GUESS_AT and u >= self.p_informative:
            if u < self.p_informative + self.p_guess:
                s = ev.sample(rng)
                if s is not None:
                    return self._guess(s)
            pool = ev.unasked()
            if pool:
                return bank.questions[rng.choice(pool)].text
        return self._best(ev, n_asked)

    def _best(self, ev: Evidence, n_asked: int) -> str:
        """The strong choice: guess the most likely secret once it dominates (or on the last
        ``GUESS_LAST`` questions), else ask the most informative unasked question."""
        bank = self._bank
        assert bank is not None
        top, p = ev.top()
        last = n_asked + GUESS_LAST >= self._max_questions
        qi = None if (top is not None and (p >= GUESS_AT or last)) else ev.best_question()
        if qi is not None:
            return bank.questions[qi].text
        if top is not None:
            return self._guess(top)
        pool = [q for q in bank.questions if q.text not in ev.asked] or bank.questions
        return pool[0].text  # every secret guessed: any question not asked yet

    def _guess(self, secret: int) -> str:
        bank = self._bank
        assert bank is not None
        return bank.questions[bank.guesses[secret]].text
