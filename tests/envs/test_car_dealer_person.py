"""A person playing the Car Dealer buyer: the app's chat and decision-form helpers
(:mod:`envs.car_dealer.partner.person`)."""

from __future__ import annotations

from typing import Any

import pytest

import envs
from envs.car_dealer.data import parse_output
from envs.car_dealer.partner.person import buyer_decision, buyer_message
from envs.car_dealer.task import CarDealerTask
from envs.core import Text, run_episode


class HumanBuyer:
    """What the app's human buyer does: answers chat lines, then fills in the decision form."""

    kind, name = "human", "tester"

    def __init__(self) -> None:
        self.answers = [
            buyer_message("Hi, I want a Toyota SUV."),
            buyer_decision("OK, deal.", True, 32000, 30000),
        ]

    def reset(self, task: Any, seed: int | None = None) -> None:
        pass

    def act(self, history: Any) -> str:
        return self.answers.pop(0)


def test_human_buyer_closes_a_deal_with_the_strong_seller() -> None:
    t = CarDealerTask(partner=HumanBuyer())
    ep = run_episode(t, envs.make_policy("car-dealer", "strong"), 4)
    assert ep.transitions[-1].observation == "OK, deal. \n"
    assert ep.transitions[-1].info["decision"] == {
        "car_bought": True,
        "msrp": 32000,
        "buy_price": 30000,
    }
    assert t.state()["partner"] == {"kind": "human", "name": "tester"}


def test_human_buyer_helpers_validate() -> None:
    with pytest.raises(envs.InvalidInput):
        buyer_message(" \x00 ")
    with pytest.raises(envs.InvalidInput):
        buyer_decision("", True, 30000)
    with pytest.raises(envs.InvalidInput):
        buyer_decision("", False, 0)
    line = buyer_decision("", False, 30000)
    assert line == "Output: Decision=Reject MSRP=$30,000\n" and parse_output(line)


def test_offers_are_the_prices_on_the_table_newest_first() -> None:
    from envs.car_dealer.partner.person import offers

    h = [
        Text("Start\n", False),
        Text("Personality: polite. ...\n", False),
        Text("Hi! What's your budget?\n", False),
        Text("My budget is $30,000.\n", True),
        Text("We have a 2022 Toyota RAV4 for $33,000.\n", False),
        Text("Would you take $29,000?\n", True),
        Text("I can do $31,000.\n", False),
        Text("Or a 2016 Volkswagen Jetta, $11,000.\n", False),
        Text("Nice car for $20k, the 2019 Zonda.\n", False),
    ]
    assert offers(h[:4], 30000) == []  # the buyer's budget is no offer
    assert offers(h, 30000) == [
        {"car": "2016 Volkswagen Jetta", "msrp": 11500, "price": 20000, "by": "seller"},
        {"car": "2016 Volkswagen Jetta", "msrp": 11500, "price": 11000, "by": "seller"},
        {"car": "2022 Toyota RAV4", "msrp": 32000, "price": 31000, "by": "seller"},
        {"car": "2022 Toyota RAV4", "msrp": 32000, "price": 29000, "by": "buyer"},
        {"car": "2022 Toyota RAV4", "msrp": 32000, "price": 33000, "by": "seller"},
    ]
    no_car = [
        *h[:2],
        Text("I have something for $25,000.\n", False),
        Text("How about $22k?\n", True),
    ]
    assert offers(no_car) == [
        {"car": None, "msrp": 25000, "price": 22000, "by": "buyer"},
        {"car": None, "msrp": 25000, "price": 25000, "by": "seller"},
    ]
