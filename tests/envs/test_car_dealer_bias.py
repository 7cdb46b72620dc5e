"""Biased buyers (the ``buyer_bias`` option): partners a seller can steer, for offline RL that
learns to influence people. The default buyer is untouched; each bias moves the top price only
through what the seller does."""

from __future__ import annotations

import pytest

import envs
from envs.car_dealer.data import Persona
from envs.car_dealer.partner import PersonaBuyer
from envs.car_dealer.partner.bias import BIAS_CAP, draw_bias
from envs.core.episode import run_episode
from envs.players.agents import make_agent

TOYOTA = Persona("polite", "a Toyota", "SUV", ("sunroof", "heated seats"), 30000)


def buyer(bias: str = "none", feature: str | None = None) -> PersonaBuyer:
    b = PersonaBuyer(TOYOTA, bias=bias, bias_feature=feature)
    b.reset(None, 0)
    for k, v in {
        "patience": 25,
        "haggles": 0,
        "first_frac": 0.85,
        "pickiness": 1.0,
        "stubborn_limit": 9,
    }.items():
        setattr(b, k, v)
    return b


def top_after(b: PersonaBuyer, *lines: str) -> int:
    for line in lines:
        b.respond(line)
    assert b.offer is not None
    return b.max_price(b.offer)


def test_an_anchoring_buyer_pays_more_after_a_high_first_price() -> None:
    honest_low = top_after(buyer(), "We have a Toyota RAV4 for $28,000.")
    honest_high = top_after(buyer(), "We have a Toyota RAV4 for $40,000.")
    assert honest_low == honest_high  # the honest buyer's top does not depend on the asking price
    low = top_after(buyer("anchoring"), "We have a Toyota RAV4 for $28,000.")
    high = top_after(buyer("anchoring"), "We have a Toyota RAV4 for $40,000.")
    assert honest_low <= low < high <= TOYOTA.budget * BIAS_CAP
    # the anchor is the *first* price: coming down later does not lower it
    b = buyer("anchoring")
    assert top_after(b, "We have a Toyota RAV4 for $40,000.", "Okay, I can do $36,000.") == high


def test_a_feature_lover_pays_more_once_its_feature_is_named() -> None:
    plain = top_after(buyer("feature", "sunroof"), "We have a Toyota RAV4 for $33,000.")
    b = buyer("feature", "sunroof")
    named = top_after(b, "We have a Toyota RAV4 for $33,000.", "It has a sunroof, you know.")
    assert plain == top_after(buyer(), "We have a Toyota RAV4 for $33,000.")
    assert plain < named <= TOYOTA.budget * BIAS_CAP
    other = top_after(
        buyer("feature", "sunroof"), "We have a Toyota RAV4 for $33,000.", "It has heated seats."
    )
    assert other == plain  # another feature is valued as usual


def test_the_default_task_is_unchanged_and_a_bias_is_recorded() -> None:
    seller = make_agent("car-dealer", "behaviour", role="seller")
    plain = run_episode(envs.make("car-dealer"), seller, 5)
    none = run_episode(
        envs.make("car-dealer", buyer_bias="none"),
        make_agent("car-dealer", "behaviour", role="seller"),
        5,
    )
    assert [(t.action, t.observation, t.reward) for t in plain.transitions] == [
        (t.action, t.observation, t.reward) for t in none.transitions
    ]
    assert "buyer_bias" not in plain.transitions[-1].info
    assert "buyer_bias" not in envs.make("car-dealer").spec.options
    kinds = set()
    for seed in range(30):
        task = envs.make("car-dealer", buyer_bias="mixed")
        ep = run_episode(task, make_agent("car-dealer", "behaviour", role="seller"), seed)
        bias = ep.transitions[-1].info["buyer_bias"]
        assert (
            (bias["kind"], bias["feature"])
            == task.buyer_bias
            == draw_bias("mixed", task.persona, seed)
        )
        assert bias["feature"] is None or bias["feature"] in task.persona.preferred_features
        kinds.add(bias["kind"])
    assert kinds == {"none", "anchoring", "feature"}
    assert envs.make("car-dealer", buyer_bias="mixed").spec.options["buyer_bias"] == "mixed"


def test_the_persona_is_drawn_as_without_a_bias() -> None:
    a, b = envs.make("car-dealer"), envs.make("car-dealer", buyer_bias="anchoring")
    for seed in (1, 2, 3):
        a.reset(seed)
        b.reset(seed)
        assert a.persona == b.persona


def test_a_high_opening_sells_for_more_to_an_anchoring_buyer() -> None:
    """The lever a seller can learn: open high, then take the buyer's counter-offer."""

    def sale(bias: str, opening: int) -> int:
        task = envs.make("car-dealer", buyer_bias=bias)
        task.reset(0, {"persona": TOYOTA.to_json()})
        st = task.step(f"We have a Toyota RAV4 for ${opening:,}.")
        for _ in range(6):
            if st.info.get("decision") is not None:
                return st.info["decision"]["buy_price"] or 0
            counter = task.partner.counter
            st = task.step(f"Okay, ${counter:,} it is. Deal!" if counter else "Do we have a deal?")
        raise AssertionError("no decision")

    assert sale("anchoring", 38000) > sale("none", 38000)
    assert sale("anchoring", 38000) > sale("anchoring", 32000)


def test_an_unknown_bias_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="buyer_bias"):
        envs.make("car-dealer", buyer_bias="gullible")
    with pytest.raises(ValueError, match="buyer bias"):
        PersonaBuyer(TOYOTA, bias="gullible")
