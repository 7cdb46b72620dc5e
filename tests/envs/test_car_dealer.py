"""Car Dealer: LMRL's persona draws, texts, rewards and horizon; partners; scripted sellers."""

from __future__ import annotations

import json
import random
import statistics
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import envs
from envs.car_dealer.data import Decision, persona_line, sample_persona
from envs.car_dealer.task import CarDealerTask, decision_reward
from envs.core import Text, replay, run_episode
from envs.core.checker import check_task


@pytest.mark.parametrize("policy", ["behaviour", "strong", "random"])
def test_check_task(policy: str) -> None:
    check_task("car-dealer", policy=policy)


def test_check_task_revenue_mode() -> None:
    check_task("car-dealer", options={"reward_mode": "revenue"})


def test_spec() -> None:
    spec = envs.spec("car-dealer")
    assert spec.roles == ("seller", "buyer")
    assert spec.max_turns == 25
    assert set(envs.policies("car-dealer")) >= {"behaviour", "strong", "random"}


def test_persona_draw_matches_lmrl_seed_3() -> None:
    p = sample_persona(random.Random(3))
    assert p.to_json() == {
        "personality": "polite",
        "preferred_brands": "a Subaru",
        "preferred_type": "electric",
        "preferred_features": ["blind spot monitoring", "third-row seating"],
        "budget": 70000,
    }
    assert persona_line(p) == (
        "Personality: polite. Prefers a Subaru electric with blind spot monitoring, "
        "third-row seating. Budget: $70,000\n"
    )


def test_reset_draws_the_persona_from_the_seed() -> None:
    t = CarDealerTask()
    assert t.reset(3) == "Start\n"
    assert t.persona == sample_persona(random.Random(3))
    assert t.history() == (Text("Start\n", False),)


@pytest.mark.parametrize(
    ("accept", "msrp", "price", "mode", "expected"),
    [
        (True, 32000, 29500, "fancy", 0.951613),
        (False, 32000, None, "fancy", 0.0625),
        (False, 25000, None, "fancy", -0.2),
        (True, 32000, 29500, "revenue", 29.5),
        (False, 32000, None, "revenue", 0.0),
        (True, 32000, None, "fancy", 0.0),
    ],
)
def test_rewards_match_lmrl(
    accept: bool, msrp: int, price: int | None, mode: str, expected: float
) -> None:
    d = Decision(accept, msrp, price, (0, 0))
    assert decision_reward(d, 30000, mode) == pytest.approx(expected, abs=1e-6)


def test_absurd_prices_are_clipped_to_the_reward_range() -> None:
    assert decision_reward(Decision(False, 1, None, (0, 0)), 90000, "fancy") == -100.0
    assert decision_reward(Decision(True, 1, 10**9, (0, 0)), 10000, "revenue") == 1000.0


class Script:
    """A partner that says the given lines in order (and records what it saw)."""

    kind, name = "scripted", "script"

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        self.seen: list[tuple[Text, ...]] = []

    def reset(self, task: Any, seed: int | None = None) -> None:
        pass

    def act(self, history: Any) -> str:
        self.seen.append(tuple(history))
        return self.lines.pop(0) if len(self.lines) > 1 else self.lines[0]


def test_output_line_is_cut_from_what_the_seller_sees() -> None:
    partner = Script(
        "Hello.\n", "Deal, I'll take it. Output: Decision=Accept MSRP=$32,000 Buy Price=$29,500\n"
    )
    t = CarDealerTask(partner=partner)
    t.reset(
        0,
        {
            "persona": {
                "personality": "polite",
                "preferred_brands": "a Toyota",
                "preferred_type": "SUV",
                "preferred_features": ["sunroof"],
                "budget": 30000,
            }
        },
    )
    s1 = t.step("Hi!\n")
    assert s1 == ("Hello.\n", 0.0, False, False, s1.info)
    s2 = t.step("The RAV4 is $29,500.\n")
    assert s2.observation == "Deal, I'll take it. \n"
    assert s2.terminated and s2.reward == pytest.approx(0.951613, abs=1e-6)
    assert all("Output" not in x.text for x in t.history())
    state = t.state()
    assert (
        state["transcript"][-1]["hidden"]
        == "Output: Decision=Accept MSRP=$32,000 Buy Price=$29,500"
    )
    assert state["transcript"][-1]["visible"] == "Deal, I'll take it. \n"
    assert state["deal"] == {
        "car_bought": True,
        "msrp": 32000,
        "buy_price": 29500,
        "decision": "accept",
    }
    assert state["done"] and state["to_act"] is None
    assert s2.info["success"] is True and s2.info["persona"]["budget"] == 30000


def test_buyer_view_is_lmrl_format() -> None:
    partner = Script("  Hello there.  \n")
    t = CarDealerTask(partner=partner)
    t.reset(3)
    t.step("  Hi! Welcome.  \n")
    t.step("What car?\n")
    view = partner.seen[-1]
    assert view[0] == Text("Start\n", False)
    assert view[1] == Text(persona_line(t.persona), False)
    assert view[2:] == (
        Text("Hi! Welcome.\n", False),
        Text("Hello there.\n", True),
        Text("What car?\n", False),
    )
    assert t.history()[1] == Text("  Hi! Welcome.  \n", True)  # the seller's text is kept verbatim


def test_forced_decision_after_50_texts_really_parses() -> None:
    partner = Script(*["Hmm, tell me more.\n"] * 25, "Accept MSRP=$32,000 Buy Price=$29,500\n")
    t = CarDealerTask(partner=partner)
    t.reset(5)
    steps = [t.step(f"Line {i}\n") for i in range(25)]
    assert all(not s.terminated and not s.truncated for s in steps[:-1])
    last = steps[-1]
    assert last.terminated and last.info["forced"]
    assert last.observation == "Hmm, tell me more.\n"
    assert last.info["decision"]["buy_price"] == 29500
    assert partner.seen[-1][-1] == Text("Hmm, tell me more.Output: Decision=", True)
    assert last.info["partner_replies"] == [
        "Hmm, tell me more.\n",
        "Accept MSRP=$32,000 Buy Price=$29,500\n",
    ]
    assert len(t.history()) == 51


def test_forced_decision_may_repeat_the_whole_prefix() -> None:
    t = CarDealerTask(
        partner=Script("Hm.\n", "Output: Decision=Reject MSRP=$20,000\n"), max_texts=2
    )
    t.reset(0)
    s = t.step("Hi\n")
    assert s.terminated and s.info["decision"]["car_bought"] is False


def test_forced_decision_that_does_not_parse_ends_with_zero() -> None:
    t = CarDealerTask(partner=Script("I dunno.\n"), max_texts=4)
    t.reset(0)
    t.step("a\n")
    s = t.step("b\n")
    assert s.truncated and not s.terminated and s.reward == 0.0
    assert s.info["decision"] is None and s.info["success"] is False


def test_persona_buyer_decides_when_forced() -> None:
    t = CarDealerTask(max_texts=4)
    t.reset(11)
    t.partner.patience = 99
    t.step("Hello! What are you looking for?\n")
    s = t.step("Let me check with my manager.\n")
    assert s.terminated and s.info["forced"] and s.info["decision"] is not None


def test_unreadable_seller_text_is_flagged() -> None:
    t = CarDealerTask()
    t.reset(0)
    s = t.step("\x00\x1b[31m\n")
    assert s.info["understood"] is False and s.reward == 0.0 and not s.terminated
    assert t.step("Hello! What kind of car are you looking for?\n").info["understood"] is True


def test_partner_replies_replay_an_episode_exactly() -> None:
    ep = run_episode(envs.make("car-dealer"), envs.make_policy("car-dealer", "behaviour"), 7)
    replies = [r for tr in ep.transitions for r in tr.info["partner_replies"]]
    again = replay(
        envs.make("car-dealer", partner_replies=replies), 7, [tr.action for tr in ep.transitions]
    )
    assert [(t.observation, t.reward, t.terminated) for t in again.transitions] == [
        (t.observation, t.reward, t.terminated) for t in ep.transitions
    ]
    assert (
        envs.make("car-dealer", partner_replies=replies).spec.options["partner_replies"] == replies
    )


def test_replay_partner_running_out_is_a_clear_error() -> None:
    t = envs.make("car-dealer", partner_replies=["Hi.\n"])
    t.reset(0)
    t.step("Hello\n")
    with pytest.raises(RuntimeError, match="ran out"):
        t.step("More\n")


def test_parse_input_for_a_human_seller() -> None:
    t = CarDealerTask()
    assert t.parse_input("  Hi!\n  How are you? ") == "Hi! How are you?\n"
    for bad in ("", " \t\n", "\x00\x01", "x" * 501):
        with pytest.raises(envs.InvalidInput):
            t.parse_input(bad)


def test_state_hides_nothing_it_should_show_and_marks_secrets() -> None:
    t = envs.make("car-dealer")
    t.reset(2)
    s = t.state()
    assert s["to_act"] == "seller" and not s["done"] and s["transcript"] == []
    assert set(s["secret"]) == {"persona", "persona_line"}
    t.step("Hello! What's your budget?\n")
    s = t.state()
    assert [x["role"] for x in s["transcript"]] == ["seller", "buyer"]
    json.dumps(s)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.text(max_size=300), min_size=1, max_size=6))
def test_any_seller_text_is_answered(texts: list[str]) -> None:
    t = CarDealerTask()
    t.reset(1)
    for text in texts:
        s = t.step(text)
        assert isinstance(s.observation, str) and s.observation.endswith("\n")
        assert "Output: Decision=" not in s.observation
        assert -100.0 <= s.reward <= 100.0
        assert isinstance(s.info["understood"], bool)
        json.dumps(dict(s.info))
        json.dumps(t.state())
        if s.terminated or s.truncated:
            break


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=500))
def test_any_partner_reply_is_a_defined_answer(reply: str) -> None:
    t = CarDealerTask(partner=Script(reply), max_texts=2)
    t.reset(1)
    s = t.step("Hi\n")
    assert s.observation.endswith("\n") and s.observation.count("\n") == 1
    assert s.terminated or s.truncated
    assert -100.0 <= s.reward <= 100.0


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=300))
def test_parse_input_never_raises_anything_but_invalid_input(typed: str) -> None:
    try:
        out = CarDealerTask().parse_input(typed)
    except envs.InvalidInput:
        return
    assert out.endswith("\n") and out.count("\n") == 1


def _rates(policy: str, n: int = 150) -> tuple[float, float]:
    wins, rets = 0, []
    for seed in range(n):
        ep = run_episode(envs.make("car-dealer"), envs.make_policy("car-dealer", policy), seed)
        wins += bool(ep.transitions[-1].info["success"])
        rets.append(ep.total_return)
    return wins / n, statistics.mean(rets)


def test_scripted_sellers_rank_and_behaviour_is_near_lmrl_success() -> None:
    b_rate, b_ret = _rates("behaviour")
    s_rate, s_ret = _rates("strong")
    r_rate, r_ret = _rates("random")
    assert 0.4 <= b_rate <= 0.66  # LMRL's data: 0.53
    assert s_rate > 0.9 and s_ret > b_ret > r_ret
    assert r_rate < b_rate


def test_seller_never_sees_the_output_line_in_generated_episodes() -> None:
    for seed in range(30):
        t = envs.make("car-dealer")
        run_episode(t, envs.make_policy("car-dealer", "behaviour"), seed)
        assert "Output:" not in "".join(x.text for x in t.history())


class Failing:
    kind, name = "http", "down"

    def reset(self, task: Any, seed: int | None = None) -> None:
        pass

    def act(self, history: Any) -> str:
        raise ConnectionError("endpoint down")


def test_partner_failure_leaves_the_step_retryable() -> None:
    t = CarDealerTask(partner=Failing())
    t.reset(0)
    with pytest.raises(ConnectionError):
        t.step("Hello\n")
    assert t.history() == (Text("Start\n", False),)
    assert t.state()["transcript"] == [] and t.state()["to_act"] == "seller"
    t.partner = Script("Hi.\n")
    assert t.step("Hello\n").observation == "Hi.\n"


def test_decision_prompt_and_suggested_terms() -> None:
    from envs.car_dealer.partner.person import is_decision_prompt, suggested_terms

    seen: list[Any] = []

    class Spy(Script):
        def act(self, history: Any) -> str:
            seen.append(tuple(history))
            return "Hmm.\n" if not is_decision_prompt(history) else "Reject MSRP=$32,000\n"

    t = CarDealerTask(partner=Spy("x"), max_texts=4)
    t.reset(0)
    t.step("We have the 2022 Toyota RAV4 for $35,000.\n")
    t.step("OK, $33,000 then?\n")
    assert [is_decision_prompt(h) for h in seen] == [False, False, True]
    assert suggested_terms(seen[-1]) == {"car": "2022 Toyota RAV4", "msrp": 32000, "price": 33000}
    assert t.state()["deal"]["decision"] == "reject"
