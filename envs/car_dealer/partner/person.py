"""A person playing the Car Dealer buyer: what the app's chat and decision form use.

A person answers with :func:`buyer_message` lines and ends the talk with :func:`buyer_decision`
(the chat line plus the Output line); :func:`is_decision_prompt` tells when the task forces the
decision, :func:`offers` lists the prices on the table (what a person's decision form offers to
accept, with the MSRP filled in) and :func:`suggested_terms` the last ones.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from envs.car_dealer.data import OUTPUT_PREFIX, output_text
from envs.car_dealer.task import MAX_HUMAN_CHARS
from envs.car_dealer.text import clean, find_car, find_prices
from envs.core import InvalidInput, Text


def buyer_message(typed: str) -> str:
    """A human buyer's chat line as the partner reply (raises InvalidInput when empty)."""
    text = clean(typed)
    if not text:
        raise InvalidInput("Type something to say to the seller.")
    if len(text) > MAX_HUMAN_CHARS:
        raise InvalidInput(f"That's too long: keep it under {MAX_HUMAN_CHARS} characters.")
    return text + "\n"


def is_decision_prompt(history: Sequence[Text]) -> bool:
    """True when a partner is asked for the forced final decision (its line cut at the prefix).

    A human buyer then fills in a decision form; :func:`buyer_decision` (or just
    ``"Accept MSRP=$32,000 Buy Price=$29,500\\n"``) is the answer.
    """
    return bool(history) and history[-1].is_action and history[-1].text.endswith(OUTPUT_PREFIX)


def suggested_terms(history: Sequence[Text]) -> dict[str, Any]:
    """Defaults for a buyer's decision form from the seller's lines: the last car the seller
    named (its list price is the MSRP; else the first price named for it) and the last price."""
    car_name, msrp, price = None, None, None
    for t in history[2:]:
        if t.is_action:
            continue
        text = clean(t.text)
        car, prices = find_car(text), find_prices(text)
        if car is not None and car.name != car_name:
            car_name, msrp = car.name, car.price
        if prices:
            price = prices[-1]
            msrp = msrp or price
    return {"car": car_name, "msrp": msrp, "price": price}


_BUDGET_TALK = re.compile(r"budget|afford|spend|up to|at most", re.IGNORECASE)


def offers(history: Sequence[Text], budget: int | None = None) -> list[dict[str, Any]]:
    """The prices named in a buyer's view (``Start``, persona line, dialogue), newest first.

    Each ``{"car", "msrp", "price", "by"}`` once (its newest mention): ``by`` is ``"seller"`` for
    the seller's prices and ``"buyer"`` for the buyer's own counter-offers. A price is for the car
    the line names, else for the car under discussion (the last one named by the seller; the
    buyer's lines about its budget do not count); ``car``
    is None when no car was named yet. The MSRP is the car's list price when it is on the lot,
    else the first price named for it (``budget`` when there is none yet).
    """
    found: list[dict[str, Any]] = []
    car_name, msrp = None, None
    for t in history[2:]:
        text = clean(t.text)
        car, prices = find_car(text), find_prices(text)
        if t.is_action and _BUDGET_TALK.search(text):
            continue  # the buyer's budget is no offer
        if not t.is_action and car is not None and car.name != car_name:
            car_name, msrp = car.name, car.price
        if not prices:
            continue
        if msrp is None and not t.is_action:
            msrp = prices[0]
        for price in prices if t.is_action else prices[-1:]:
            found.append(
                {
                    "car": car_name,
                    "msrp": msrp or price or budget,
                    "price": price,
                    "by": "buyer" if t.is_action else "seller",
                }
            )
    out: list[dict[str, Any]] = []
    for offer in reversed(found):
        if offer not in out:
            out.append(offer)
    return out


def buyer_decision(message: str, accept: bool, msrp: int, buy_price: int | None = None) -> str:
    """A buyer reply that ends the negotiation: ``message`` + space + the Output line.

    What the app's decision form returns for a human buyer (``msrp`` >= 1; ``buy_price`` is
    required to accept).
    """
    if int(msrp) < 1:
        raise InvalidInput("The MSRP must be at least $1.")
    if accept and (buy_price is None or int(buy_price) < 0):
        raise InvalidInput("Give the price you pay to accept.")
    out = output_text(accept, int(msrp), None if buy_price is None else int(buy_price))
    text = clean(message)
    return f"{text} {out}\n" if text else out + "\n"
