"""Scripted Car Dealer sellers: ``behaviour`` (the data recipe), ``strong`` and ``random``.

All read the buyer's replies with the finders of :mod:`envs.car_dealer.text` and sell from the
shipped inventory. ``behaviour`` and ``strong`` answer what the buyer asked for
(:func:`envs.car_dealer.data.answer`): the make, model or type it names (the latest wins; what it rules
out, "not a Ford", is not a request) when the lot has it, else they say it is not in stock and
offer the closest match, never an unrelated car. A buyer asking for another car while one is
under discussion gets that car, and no small talk.

* ``strong``: asks for the buyer's wishes and budget, offers the car with the best expected
  reward among those that answer them (a good match whose list price is close to the budget),
  pitches the wanted features, asks the most it expects the buyer to pay, says once that it is its
  final price, then meets the buyer's counter. It reads a budget as people say it ("not more than
  10 grand", "15k max"), and a budget said after its offer that the car cannot go for gets
  another car.
* ``behaviour``: per episode one of three styles (anchor high and concede slowly; start at the
  list price and meet halfway; push features and hold the price), with sloppy habits (sometimes
  skips the questions, ignores the budget, or makes small talk). Its deal rate (0.58 over
  seeds 0-999) is near LMRL's data (0.53); ``bench/bench_car_dealer.py`` prints it.
* ``random``: random lines about random cars and prices (the task has no enumerable actions).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from typing import Any

from envs.car_dealer.data import Car, Wishes, answer, inventory, join_words, money
from envs.car_dealer.text import clean, find_prices, read_request
from envs.core import Text

_BUDGET_RE = re.compile(r"budget|spend|up to|afford", re.I)
_DISLIKE_RE = re.compile(r"not interested|isn't what|not what|don't want|you don't have", re.I)
_ASK_PRICE_RE = re.compile(r"how much|what'?s the price|price\?", re.I)
_CEILING_RE = re.compile(
    r"not more than|no more than|at most|\bmax(?:imum)?\b|\bunder\b|\bbelow\b|\blimit\b|less than|"
    r"\bwithin\b|\bcap\b|can only (?:pay|spend|afford)|(?:can't|cannot|won't) (?:pay|spend|go) (?:more|over|above)",
    re.I,
)
"""A person's ways of saying the most they pay ("not more than 10 grand", "15k max"): read as the
budget by the strong seller (none is in the embedded buyer's phrases, so its games are unchanged)."""
_SMALL_TALK = (
    "Let me check with my manager.",
    "Would you like some coffee while we talk?",
    "Our service department is open on weekends too.",
    "Nice weather today, isn't it?",
)


def _floor100(x: float) -> int:
    return int(math.floor(x / 100.0) * 100)


class _Seller:
    """Shared memory of what the buyer said; subclasses choose the next line."""

    kind = "scripted"
    name = "seller"

    def __init__(self) -> None:
        self._rng = random.Random()
        self._clear()

    def _clear(self) -> None:
        self.turn = 0
        self.wishes = Wishes()
        self.budget: int | None = None
        self.counter: int | None = None
        self.car: Car | None = None
        self.ask: int | None = None
        self.offered: set[str] = set()
        self.asked_for = False
        """The buyer's last line asked for a car (answer it: no small talk)."""
        self.asked: dict[str, int] = {}
        self.last = ""

    def reset(self, task: Any = None, seed: int | None = None) -> None:
        self._rng = random.Random(None if seed is None else seed * 7919 + 17)
        self._clear()

    def act(self, history: Sequence[Text]) -> str:
        if len(history) > 1 and not history[-1].is_action:
            self._read(history[-1].text)
        self.turn += 1
        return clean(self._next()) + "\n"

    # -- reading the buyer -------------------------------------------------------------------
    def _read(self, line: str) -> None:
        text = clean(line)
        self.last = text
        counter = None
        named = self.car.name if self.car else ""
        if self.car is not None and _DISLIKE_RE.search(text):
            self._drop_car()
        request = read_request(text, named)
        self.wishes.add(request)
        self.asked_for = request.names_a_car
        if self.car is not None and request.names_a_car and not request.fits(self.car):
            self._drop_car()  # the buyer asks for another car: answer that
        prices = find_prices(text.replace(named, "") if named else text)
        if prices and _BUDGET_RE.search(text) and "over" not in text.lower():
            self.budget = prices[-1]
        elif prices and self.car is not None:
            counter = prices[-1]
        self.counter = counter if counter is not None else self.counter

    def _drop_car(self) -> None:
        self.car, self.ask, self.counter = None, None, None

    @property
    def brand(self) -> str | None:
        return self.wishes.brand

    @property
    def ctype(self) -> str | None:
        return self.wishes.ctype

    @property
    def features(self) -> set[str]:
        return self.wishes.features

    def _ask(self, key: str) -> int:
        self.asked[key] = self.asked.get(key, 0) + 1
        return self.asked[key]

    # -- choosing a car ----------------------------------------------------------------------
    def _match(self, car: Car) -> float:
        return self.wishes.match(car)

    def expected_top(self, car: Car) -> int:
        """What a buyer with the known wishes pays at most for ``car`` (the persona buyer's rule)."""
        top = _floor100(car.price * (0.8 + 0.2 * self._match(car) / 3))
        return min(top, self.budget) if self.budget else top

    def _candidates(self) -> tuple[list[Car], str]:
        """The cars that answer what the buyer asked for, and what to say first if none fits."""
        return answer(self.wishes, self.offered, self.budget)

    def _pitch(self, car: Car, price: int, note: str = "") -> str:
        """An offer pitching the wanted features (after ``note``: named as the closest match)."""
        good = [f for f in car.features if f in self.features] or list(car.features[:2])
        intro = (
            f"{note} The closest match is the {car.name}."
            if note
            else f"I'd recommend the {car.name}."
        )
        return f"{intro} It comes with {join_words(good)}. It's {money(price)}."

    def _next(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError


class StrongSeller(_Seller):
    """The best scripted seller (the normalised score's max); see the module docstring."""

    name = "strong"

    def _clear(self) -> None:
        super()._clear()
        self.said_final = False
        self.offered_at: int | None = None
        """The budget known when the car under discussion was offered."""

    def _read(self, line: str) -> None:
        counter = self.counter
        super()._read(line)
        text = clean(line)
        named = self.car.name if self.car else ""
        prices = find_prices(text.replace(named, "") if named else text)
        if prices and _CEILING_RE.search(text):  # the most the buyer pays: a budget, not a counter
            self.budget, self.counter = prices[-1], counter

    def _floor(self, car: Car) -> int:
        """The least a buyer who wants ``car`` pays at most (the persona buyer's rule, no match)."""
        return _floor100(car.price * 0.8)

    def _next(self) -> str:
        if (
            self.car is not None
            and self.budget is not None
            and self.budget != self.offered_at
            and self.budget < self._floor(self.car)
        ):
            # A budget said (or lowered) after the offer, under what the car can go for: offer
            # one the buyer can pay rather than pitch this one again.
            self.offered.add(self.car.name)
            self._drop_car()
            return "That one is over your budget, then. " + self._offer()
        if self.turn == 1:
            self._ask("needs")
            self._ask("budget")
            return (
                "Hello and welcome! What kind of car are you looking for, and what's your budget?"
            )
        if not (self.brand or self.ctype) and self._ask("needs") <= 2:
            return "Which brand and type of car would you like?"
        if self.budget is None and self._ask("budget") <= 2:
            return "What's your budget?"
        if not self.features and self._ask("features") <= 1:
            return "Which features matter most to you?"
        if self.car is None:
            return self._offer()
        if self.counter is not None and self.ask is not None and self.counter < self.ask:
            if not self.said_final:
                self.said_final = True
                return f"{money(self.ask)} is my final price, and it's a fair one."
            self.ask = self.counter
            return f"Alright, you've got a deal at {money(self.counter)}."
        if _ASK_PRICE_RE.search(self.last) and self.ask is not None:
            return f"It's {money(self.ask)}."
        return f"Do we have a deal at {money(self.ask or 0)}?"

    def _offer(self) -> str:
        cands, note = self._candidates()
        if not cands:
            return note or "Sorry, that's everything we have. Do any of those work for you?"

        def value(c: Car) -> float:
            p_ok = min(1.0, max(0.0, (self._match(c) - 0.6) / 1.0))
            b = self.budget or c.price
            return p_ok * self.expected_top(c) / ((b + c.price) / 2)

        car = max(cands, key=value)
        self.car, self.ask, self.counter, self.said_final = car, self.expected_top(car), None, False
        self.offered_at = self.budget
        self.offered.add(car.name)
        return self._pitch(car, self.ask, note)


class BehaviourSeller(_Seller):
    """LMRL-like mixed-quality seller; see the module docstring."""

    name = "behaviour"

    def __init__(
        self,
        p_skip_questions: float = 0.35,
        p_ignore_budget: float = 0.4,
        p_small_talk: float = 0.18,
    ) -> None:
        self.p_skip_questions = p_skip_questions
        self.p_ignore_budget = p_ignore_budget
        self.p_small_talk = p_small_talk
        super().__init__()

    def reset(self, task: Any = None, seed: int | None = None) -> None:
        super().reset(task, seed)
        r = self._rng
        self.style = r.choice(("anchor", "halfway", "features"))
        self.skip_questions = r.random() < self.p_skip_questions
        self.ignore_budget = r.random() < self.p_ignore_budget
        self.markup = r.uniform(1.1, 1.35) if self.style == "anchor" else 1.0
        self.holds = 0

    def _next(self) -> str:
        r = self._rng
        if self.turn > 1 and r.random() < self.p_small_talk and not self.asked_for:
            return r.choice(_SMALL_TALK)
        if self.turn == 1:
            if self.skip_questions:
                return "Hi! We have some great deals today."
            return "Hi! Welcome. What kind of car are you looking for?"
        if not self.skip_questions and self.budget is None and self._ask("budget") <= 1:
            return "What's your budget?"
        if self.car is None:
            return self._offer()
        if self.counter is not None and self.ask is not None and self.counter < self.ask:
            return self._respond_to_counter()
        if _ASK_PRICE_RE.search(self.last) and self.ask is not None:
            return f"It's {money(self.ask)}."
        if self.style == "features" and self.car.features and self.holds < 2:
            self.holds += 1
            return f"Remember, it has {join_words(list(self.car.features[:3]))}. Do we have a deal?"
        return f"So, do we have a deal at {money(self.ask or 0)}?"

    def _offer(self) -> str:
        r = self._rng
        cands, note = self._candidates()
        if not cands:
            return note or "Is there anything else you'd consider?"
        if not self.ignore_budget and self.budget:
            cands = [c for c in cands if c.price <= self.budget * 1.1] or cands
        car = r.choice(cands)
        self.car, self.counter = car, None
        self.ask = _floor100(car.price * self.markup)
        self.offered.add(car.name)
        if self.style == "features":
            return self._pitch(car, self.ask, note)
        if note:
            return f"{note} The closest match is the {car.name}, for {money(self.ask)}."
        return f"We have a {car.name} for {money(self.ask)}."

    def _respond_to_counter(self) -> str:
        assert self.counter is not None and self.ask is not None
        gap = self.ask - self.counter
        if self.style == "anchor":
            step = 0.04 * self.ask
        elif self.style == "halfway":
            step = gap / 2
        else:
            if self.holds < 2:
                self.holds += 1
                return f"It's worth every penny: {join_words(list(self.car.features[:2]))}. {money(self.ask)} is the price."  # type: ignore[union-attr]
            step = 0.05 * self.ask
        if gap <= max(1000, step):
            self.ask = self.counter
            return f"Okay, {money(self.counter)} it is. Deal!"
        self.ask = _floor100(self.ask - step)
        return f"I can come down to {money(self.ask)}."


class RandomSeller(_Seller):
    """Random seller lines: greetings, random cars at random prices, closings, small talk."""

    kind = "random"
    name = "random"

    def _next(self) -> str:
        r = self._rng
        car = r.choice(inventory())
        price = _floor100(car.price * r.uniform(0.6, 1.4))
        lines = (
            "Hello! What are you looking for today?",
            f"We have a {car.name} for {money(price)}.",
            f"How about {money(price)}?",
            "Do we have a deal?",
            f"It has {r.choice(car.features)}.",
            r.choice(_SMALL_TALK),
            "What's your budget?",
        )
        return r.choice(lines)


POLICIES = {"behaviour": BehaviourSeller, "strong": StrongSeller, "random": RandomSeller}
