"""Guess My City: texts, the fixed correct-guess rule, partners, replay, scripted guessers."""

from __future__ import annotations

import json
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envs
from envs.core import InvalidInput, Text
from envs.core.checker import check_task
from envs.questions.guess_city.partner import NOT_SURE, answer, cities

TASK = "guess-city"


class Partner:
    kind = "test"
    name = "partner"

    def __init__(self, replies=None):
        self.replies = list(replies or [])
        self.seen = []
        self.task = None

    def reset(self, task, seed=None):
        self.task = task

    def act(self, history):
        self.seen.append(tuple(history))
        if self.replies:
            return self.replies.pop(0)
        return answer(self.task.state()["pending_question"], self.task.secret).text


@pytest.mark.parametrize("policy", ["strong", "behaviour", "random"])
def test_check_task(policy):
    check_task(TASK, policy=policy)


def test_transcript_open_and_yes_no_answers_and_a_real_guess_wins():
    t = envs.make(TASK, secret="Delhi")
    assert t.reset(0) == "Questions:\n"
    s1 = t.step("What is the weather like?\n")
    assert s1.observation == "It is fairly dry, with hot summers and little rain.\n"
    assert s1.reward == -1.0 and s1.info["understood"] is True
    assert t.step("Is it in Asia?\n").observation == "Yes.\n"
    s3 = t.step("D?\n")  # LMRL's coded check would end the episode here
    assert not s3.terminated and s3.reward == -1.0
    s4 = t.step("Is it Delhi?\n")
    assert s4.terminated and s4.reward == 0.0 and s4.info["success"] is True
    assert s4.info["secret"] == "Delhi" and s4.info["guess"] == "Delhi"
    assert t.state()["return"] == -3.0
    assert t.history()[1:3] == (
        Text("What is the weather like?\n", True),
        Text("It is fairly dry, with hot summers and little rain.\n", False),
    )


def test_horizon_is_twenty_questions():
    t = envs.make(TASK, secret="Lima")
    t.reset(0)
    for _ in range(19):
        assert not t.step("Is it in Asia?\n").truncated
    s = t.step("Is it Paris?\n")
    assert s.truncated and not s.terminated and s.info["success"] is False
    assert t.state()["return"] == -20.0


def test_state_has_secret_facts_for_the_oracle_player():
    t = envs.make(TASK, secret="Cairo")
    t.reset(0)
    sec = t.state()["secret"]
    assert sec["name"] == "Cairo" and sec["word"] == "cairo,egypt" and sec["country"] == "Egypt"
    assert "Nile" == sec["river"] and sec["foods"]
    json.dumps(t.state())


def test_partner_prompt_and_normalisation():
    p = Partner(["It is  very\nhot there.", "", "yes!", "Yes, you got it"])
    t = envs.make(TASK, secret="Delhi", partner=p)
    t.reset(5)
    s1 = t.step("What is the weather like?\n")
    assert s1.observation == "It is very hot there.\n" and s1.info["normalised"] is True
    assert p.seen[0] == (
        Text(
            "Answer the question about the city truthfully.\n    object: delhi,india\n"
            "    question: What is the weather like?\n    answer: ",
            False,
        ),
    )
    s2 = t.step("Is it in Europe?\n")
    assert s2.observation == "No.\n" and s2.info["normalised"] is True
    s3 = t.step("Is it in Mumbai?\n")  # a yes to a wrong city does not win
    assert s3.observation == "yes!\n" and not s3.terminated
    s4 = t.step("Are you from Delhi?\n")
    assert s4.terminated and s4.reward == 0.0
    assert "normalised" not in s4.info


def test_replay_with_recorded_replies():
    p = Partner(["Asia, I think.", "no", "Yes"] + [""] * 17)
    ep = envs.run_episode(envs.make(TASK, partner=p), envs.make_policy(TASK, "behaviour"), 4)
    replies = [tr.info["reply"] for tr in ep.transitions]
    again = envs.replay(
        envs.make(TASK), 4, [tr.action for tr in ep.transitions], {"partner_replies": replies}
    )
    sig = [(t.observation, t.reward, t.terminated, t.truncated) for t in ep.transitions]
    assert [(t.observation, t.reward, t.terminated, t.truncated) for t in again.transitions] == sig


def test_strong_asker_beats_a_truthful_outside_oracle():
    for seed in range(5):
        ep = envs.run_episode(
            envs.make(TASK, partner=Partner()), envs.make_policy(TASK, "strong"), seed
        )
        assert ep.transitions[-1].info["success"] is True


def test_parse_reply_for_a_human_oracle():
    t = envs.make(TASK)
    assert t.parse_reply("y") == "Yes." and t.parse_reply(" NO ") == "No."
    assert t.parse_reply("It is hot\nand humid") == "It is hot and humid"
    with pytest.raises(InvalidInput):
        t.parse_reply("  \n ")


def _rate(policy: str, n: int) -> tuple[float, float]:
    wins, returns = 0, []
    for seed in range(n):
        ep = envs.run_episode(envs.make(TASK), envs.make_policy(TASK, policy), seed)
        wins += bool(ep.transitions[-1].info.get("success"))
        returns.append(ep.total_return)
    return wins / n, statistics.mean(returns)


def test_scripted_guessers_success_rates():
    strong, strong_ret = _rate("strong", 60)
    behaviour, behaviour_ret = _rate("behaviour", 300)
    rand, _ = _rate("random", 100)
    assert strong == 1.0 and strong_ret >= -5
    assert 0.42 <= behaviour <= 0.65 and -19.5 < behaviour_ret < -18  # LMRL data: 0.53, -18.8
    assert rand < 0.2


def test_every_city_can_be_the_secret():
    t = envs.make(TASK, deterministic=True)
    names = set()
    for seed in range(len(cities())):
        t.reset(seed)
        names.add(t.state()["secret"]["name"])
    assert len(names) == len(cities())


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gets_a_defined_answer(text):
    t = envs.make(TASK, secret="Tokyo")
    t.reset(0)
    s = t.step(text)
    assert s.observation.endswith("\n") and s.reward in (-1.0, 0.0)
    assert "tokyo" not in s.observation.lower() or s.terminated
    if not s.info["understood"]:
        assert s.observation == NOT_SURE + "\n"
    json.dumps(dict(s.info))
