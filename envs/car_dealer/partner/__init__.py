"""The embedded Car Dealer partner: a rule-based buyer with a persona (no model, no network).

It reads each seller line (:func:`envs.car_dealer.text.understand`) and answers in its persona's
tone from hand-written templates. It is honest and consistent: it states its real preferences and
budget (an uncommunicative buyer may decline to name a budget), never pays more than its budget,
and its counter-offers only rise. Hidden traits drawn at ``reset(seed)``: patience (seller turns
before it walks away), how many times it haggles before accepting a fair price, its first-counter
fraction and its pickiness.

Valuation of a car: ``s = brand match + type match + share of wanted features`` (0..3). The car
is acceptable when it matches the brand or the type and ``s >= pickiness``; the most the buyer
pays is ``min(budget, MSRP * (0.8 + 0.2 * s / 3))`` (rounded down to $100).

Biased buyers (the task option ``buyer_bias``), a partner a seller can steer: see :mod:`.bias`.
The car under discussion as the buyer understands it: :mod:`.offer`. A person playing the buyer
(the app's chat and decision form): :mod:`.person`.

It ends the negotiation with LMRL's Output line appended to its reply after a space
(``"Deal, I'll take it. Output: Decision=Accept MSRP=$32,000 Buy Price=$29,500"``). The MSRP is the
list price of the car under discussion (for a car not in our inventory, the first price the seller
named for it; with no car discussed at all, the buyer's budget).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Any

from envs.car_dealer.data import (
    OUTPUT_PREFIX,
    Persona,
    join_words,
    money,
    output_text,
    parse_persona_line,
    phrases,
    type_phrase,
)
from envs.car_dealer.partner.bias import BIASES, FEATURE_FIRST, biased_top, note_bias
from envs.car_dealer.partner.offer import Offer
from envs.car_dealer.text import Understanding, find_features, understand
from envs.core import Text

MAX_DISLIKES = 3


def _floor100(x: float) -> int:
    return int(math.floor(x / 100.0) * 100)


# fmt: off
_PATIENCE = {"angry": (7, 14), "abusive": (7, 14), "toxic": (8, 15), "rude": (8, 16),
             "talkative": (14, 25)}
# fmt: on


class PersonaBuyer:
    """The default Car Dealer partner; see the module docstring."""

    kind = "scripted"
    name = "persona-buyer"

    def __init__(
        self, persona: Persona | None = None, bias: str = "none", bias_feature: str | None = None
    ) -> None:
        if bias not in BIASES:
            raise ValueError(f"unknown buyer bias {bias!r}; choose from {', '.join(BIASES)}")
        self._fixed = persona
        self.persona: Persona | None = persona
        self.bias, self.bias_feature = self._fixed_bias = (bias, bias_feature)
        self._rng = random.Random()
        self.last_understood: bool | None = None
        self._init_traits()

    # -- Agent API ---------------------------------------------------------------------------
    def reset(self, task: Any = None, seed: int | None = None) -> None:
        """Take the persona from ``task.persona`` (or the one given at construction); draw traits."""
        self.persona = getattr(task, "persona", None) or self._fixed
        self.bias, self.bias_feature = getattr(task, "buyer_bias", None) or self._fixed_bias
        self._rng = random.Random(seed)
        self._init_traits()

    def act(self, history: Sequence[Text]) -> str:
        """Answer the last seller line of the buyer's view (``Start``, persona line, dialogue).

        If the history ends with the buyer's own line cut off at ``"Output: Decision="`` (the
        forced decision after 50 texts), the answer is the continuation of that line.
        """
        if self.persona is None:
            self.persona = next((p for t in history[:3] if (p := parse_persona_line(t.text))), None)
            if self.persona is None:
                raise ValueError("the persona buyer needs a persona (reset it with its task)")
        if history and history[-1].is_action and history[-1].text.endswith(OUTPUT_PREFIX):
            return self._final_continuation()
        if self.decided is not None:
            return self._reply([], self.decided)
        line = next((t.text for t in reversed(history) if not t.is_action), "")
        if len(history) <= 2:  # only Start and the persona line: the buyer speaks first
            line = ""
        return self.respond(line)

    # -- state -------------------------------------------------------------------------------
    def _init_traits(self) -> None:
        r = self._rng
        lo, hi = _PATIENCE.get(self.persona.personality if self.persona else "", (10, 20))
        self.patience = r.randint(lo, hi)
        self.haggles = r.choice((0, 1, 1, 2))
        self.first_frac = r.uniform(0.8, 0.92)
        self.pickiness = r.uniform(0.6, 1.6)
        self.stubborn_limit = r.choice((2, 3))
        self.turn = 0
        self.offer: Offer | None = None
        self.last_msrp: int | None = None
        self.counter: int | None = None
        self.prev_ask: int | None = None
        self.haggled = 0
        self.stubborn = 0
        self.dislikes = 0
        self.greeted = False
        self.acknowledged: set[str] = set()
        self.said_budget = False
        self.said_over = False
        self.decided: tuple[bool, int, int | None] | None = None
        self.last_understood = None
        self.anchors: dict[str, int] = {}
        """Anchoring: the first asking price named for each car."""
        self.feature_named: set[str] = set()
        """Feature bias: the cars the seller said have the overvalued feature."""
        self.showed_bias = False

    def describe(self) -> dict[str, Any]:
        """The buyer's inner state, JSON-serialisable (for the app and tests)."""
        return {
            "offer": self.offer.to_json() if self.offer else None,
            "counter": self.counter,
            "turn": self.turn,
            "patience": self.patience,
            "max_price": self.max_price(self.offer) if self.offer else None,
            "decided": list(self.decided) if self.decided else None,
        }

    # -- valuation ---------------------------------------------------------------------------
    def match(self, offer: Offer) -> float:
        p = self.persona
        assert p is not None
        s = float(offer.brand == p.brand) + float(p.preferred_type in offer.types)
        if p.preferred_features:
            s += len(set(p.preferred_features) & offer.features) / len(p.preferred_features)
        return s

    def acceptable(self, offer: Offer) -> bool:
        p = self.persona
        assert p is not None
        basic = offer.brand == p.brand or p.preferred_type in offer.types
        return basic and self.match(offer) >= self.pickiness

    def max_price(self, offer: Offer) -> int:
        assert self.persona is not None
        msrp = offer.msrp or offer.asking or self.persona.budget
        top = min(self.persona.budget, _floor100(msrp * (0.8 + 0.2 * self.match(offer) / 3)))
        return top if self.bias == "none" else biased_top(self, offer, top, msrp)

    # -- talking -----------------------------------------------------------------------------
    def _say(self, intent: str, **kw: Any) -> str:
        p = self.persona
        assert p is not None
        table = phrases()
        own = table["personalities"].get(p.personality, {})
        options = own.get(intent) or table["default"][intent]
        fill = {
            "want": f"{p.preferred_brands} {type_phrase(p.preferred_type)}",
            "features": join_words(p.preferred_features),
            "budget": money(p.budget),
            "car": self.offer.name if self.offer else "car",
            "price": money(kw.pop("price", 0) or 0),
            "counter": money(kw.pop("counter", 0) or 0),
        }
        fill.update(kw)
        s = self._rng.choice(options).format(**fill)
        return s[:1].upper() + s[1:]

    def _reply(self, parts: list[str], decision: tuple[bool, int, int | None] | None) -> str:
        own = phrases()["personalities"].get(self.persona.personality, {}) if self.persona else {}
        if parts and own.get("openers") and self.turn > 1 and self._rng.random() < 0.3:
            parts.insert(0, self._rng.choice(own["openers"]))
        if parts and own.get("closers") and decision is None and self._rng.random() < 0.25:
            parts.append(self._rng.choice(own["closers"]))
        text = " ".join(parts)
        if decision is not None:
            self.decided = decision
            text = f"{text} {output_text(*decision)}" if text else output_text(*decision)
        return text + "\n"

    def _final_continuation(self) -> str:
        if self.decided is None:
            self.decided = self._decide_now()
        accept, msrp, price = self.decided
        return output_text(accept, msrp, price)[len(OUTPUT_PREFIX) :] + "\n"

    def _decide_now(self) -> tuple[bool, int, int | None]:
        o = self.offer
        if o and o.asking is not None and self.acceptable(o) and o.asking <= self.max_price(o):
            return (True, o.msrp or o.asking, o.asking)
        return (False, self._msrp(), None)

    def _msrp(self) -> int:
        assert self.persona is not None
        if self.offer and self.offer.msrp:
            return self.offer.msrp
        return self.last_msrp or self.persona.budget

    # -- one seller line -> one reply --------------------------------------------------------
    def respond(self, line: str) -> str:
        """The reply to one seller line (advances the buyer's state)."""
        self.turn += 1
        u = understand(line)
        self.last_understood = u.understood
        parts: list[str] = []
        decision = None
        if not u.understood:
            parts.append(self._say("confused"))
        else:
            decision = self._handle(u, parts)
        if decision is None and self.turn >= self.patience:
            parts.append(self._say("reject_patience"))
            decision = (False, self._msrp(), None)
        return self._reply(parts, decision)

    def _handle(self, u: Understanding, parts: list[str]) -> tuple[bool, int, int | None] | None:
        p = self.persona
        assert p is not None
        if u.greeting and not self.greeted:
            self.greeted = True
            parts.append(self._say("greet"))
            if p.personality == "talkative" and not u.ask_needs:
                parts.append(self._say("prefs"))
        if u.ask_needs:
            parts.append(self._say("prefs"))
            if self.bias == "feature" and self.bias_feature and self._rng.random() < 0.5:
                parts.append(FEATURE_FIRST.format(feature=self.bias_feature))
        elif u.ask_features:
            parts.append(self._say("features"))
        if u.ask_budget:
            if (
                p.personality == "uncommunicative"
                and not self.said_budget
                and self._rng.random() < 0.5
            ):
                parts.append(self._say("no_budget"))
            else:
                parts.append(self._say("budget"))
            self.said_budget = True
        new = self._update_offer(u)
        o = self.offer
        if new and o is not None:
            if not self.acceptable(o):
                self.dislikes += 1
                parts.append(self._say("dislike_car"))
                self.last_msrp = o.msrp or self.last_msrp
                self.offer = None
                if self.dislikes >= MAX_DISLIKES:
                    parts.append(self._say("reject_car"))
                    return (False, self._msrp(), None)
                return None
            parts.append(self._say("like_car"))
        if o is not None:
            self._react_features(u, o, parts)
            if self.bias != "none":
                note_bias(self, u, o, parts)
            if o.asking is None:
                if not u.ask_budget:
                    parts.append(self._say("ask_price"))
                return None
            if new or u.prices or u.closing or u.agree or u.refuse:
                return self._negotiate(u, o, parts)
        elif u.prices and not u.ask_budget:
            parts.append(self._say("what_car"))
        if not parts:
            if o is not None:
                parts.append(self._say("ack"))
            elif u.brands or u.types or u.features:
                parts.append(self._say("prefs"))
            elif u.closing or u.pitch:
                parts.append(self._say("what_car"))
            else:
                parts.append(self._say("ack"))
        return None

    def _update_offer(self, u: Understanding) -> bool:
        """Switch to the car the seller names; returns True if it is a different car."""
        price = u.price if not u.ask_budget else None
        if u.car is not None:
            if self.offer is None or self.offer.name != u.car.name:
                self.offer = Offer.from_car(u.car)
                self.offer.asking = price
                return True
        elif (u.brands or u.types) and (price is not None or u.pitch):
            brand = u.brands[0] if u.brands else None
            types = tuple(u.types)
            same = (
                self.offer is not None
                and (brand in (None, self.offer.brand))
                and (not types or set(types) <= set(self.offer.types))
            )
            if not same:
                name = " ".join(x for x in (brand, types[0] if types else "car") if x)
                self.offer = Offer(name, brand, types, set(), price, price)
                return True
        if self.offer is not None and price is not None:
            self.offer.msrp = self.offer.msrp or price
            self.offer.asking = price
        return False

    def _react_features(self, u: Understanding, o: Offer, parts: list[str]) -> None:
        assert self.persona is not None
        missing_claimed = set(find_features(u.text, negated=True))
        o.features |= set(u.features)
        o.features -= missing_claimed
        wanted = set(self.persona.preferred_features)
        liked = [f for f in u.features if f in wanted and f not in self.acknowledged]
        self.acknowledged |= set(liked)
        if liked:
            parts.append(self._say("liked_features", liked=join_words(liked)))
        gone = [f for f in self.persona.preferred_features if f in missing_claimed]
        if gone:
            parts.append(self._say("missing_features", missing=join_words(gone)))

    def _negotiate(
        self, u: Understanding, o: Offer, parts: list[str]
    ) -> tuple[bool, int, int | None] | None:
        assert self.persona is not None and o.asking is not None
        if u.agree and not u.prices and self.counter is not None:
            o.asking = self.counter
        ask, top = o.asking, self.max_price(o)
        msrp = o.msrp or ask
        if (self.counter is not None and ask <= self.counter) or (
            ask <= top and (self.haggled >= self.haggles or u.refuse)
        ):
            parts.append(self._say("accept", price=ask))
            return (True, msrp, ask)
        repeated = bool(u.prices) and ask == self.prev_ask
        self.prev_ask = ask
        if ask > top and (u.refuse or repeated or (u.closing and not u.prices)):
            self.stubborn += 1
        if self.stubborn >= self.stubborn_limit:
            parts.append(self._say("reject_price"))
            return (False, msrp, None)
        if ask > self.persona.budget and not self.said_over:
            self.said_over = True
            parts.append(self._say("over_budget", price=ask))
        new_counter = self._next_counter(ask, top)
        if new_counter is None:
            parts.append(self._say("accept", price=ask))
            return (True, msrp, ask)
        if new_counter == self.counter:
            parts.append(self._say("hold", counter=new_counter))
        else:
            parts.append(self._say("counter", price=ask, counter=new_counter))
        self.counter = new_counter
        if ask <= top:
            self.haggled += 1
        return None

    def _next_counter(self, ask: int, top: int) -> int | None:
        """The next counter-offer (never above ``top``), or None if the asking price is fine."""
        if self.counter is None:
            c = _floor100(min(ask, top) * self.first_frac)
        else:
            c = max(self.counter, _floor100(self.counter + (top - self.counter) * 0.5))
        c = min(c, top)
        if c >= ask:
            return None if ask <= top else top
        return c
