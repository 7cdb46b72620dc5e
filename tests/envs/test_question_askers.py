"""The question tasks' scripted askers listen to a person as the oracle: answers are noisy
evidence, no question is asked twice in an episode, and against the embedded oracle the askers
play exactly as before (their data are LMRL's recipe)."""

from __future__ import annotations

import hashlib
import json

import pytest

import envs
from envs.questions.partner import NoisyOracle
from envs.questions.text import reply_yes_no
from envs.questions.twenty_questions.policies import question_bank

TASKS = ("twenty-questions", "guess-city")
CHAIR_DISPUTED = ("living room", "bedroom", "outdoors", "heavy", "fabric", "soft")
"""Facts of a chair on which a person may well disagree with the knowledge base."""


class Person:
    """Answers the truth (the embedded oracle's answer), except: every guess gets ``guess_reply``
    and every other question ``reply`` when those are given."""

    kind = "test"
    name = "person"

    def __init__(self, reply: str | None = None, guess_reply: str | None = None) -> None:
        self.reply, self.guess_reply = reply, guess_reply
        self.task = None

    def reset(self, task, seed=None):
        self.task = task

    def act(self, history):
        q = self.task.state()["pending_question"]
        if self.task.guess_target(q) is not None and self.guess_reply is not None:
            return self.guess_reply
        if self.reply is not None:
            return self.reply
        return self.task.embedded_answer(q).text


def _play(task: str, policy: str, seed: int, partner, **options):
    ep = envs.run_episode(
        envs.make(task, partner=partner, **options), envs.make_policy(task, policy), seed
    )
    return [t.action for t in ep.transitions], bool(ep.transitions[-1].info.get("success"))


def _no_repeat(actions: list[str]) -> bool:
    return len(set(actions)) == len(actions)


def test_replies_are_read_as_yes_no_or_no_evidence():
    for yes in ("Yes.", "yes", "Yes, usually.", "YES!", "y", "Yep", "yeah, it is"):
        assert reply_yes_no(yes) is True, yes
    for no in ("No.", "no", "Nope", "n", "No, never.", "not really"):
        assert reply_yes_no(no) is False, no
    for vague in (
        "sometimes",
        "maybe",
        "I don't know",
        "no idea",
        "Not sure",
        "It depends",
        "yes and no",
        "",
        "North America",
        "It is hot.",
        "nothing",
    ):
        assert reply_yes_no(vague) is None, vague


# (a) a person who is wrong 15 % of the time and sometimes answers in free text
WIN_FLOOR = {"twenty-questions": 0.6, "guess-city": 0.9}
"""Measured over these 100 seeds: 0.70 and 1.00 (the askers before: 0.35 and 0.80, with repeats in
65 and 20 of the episodes)."""


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS)
def test_strong_asker_with_a_noisy_person_never_repeats_and_still_wins(task):
    wins = 0
    for seed in range(100):
        actions, won = _play(task, "strong", seed, NoisyOracle(flip=0.15, free=0.1))
        assert _no_repeat(actions), (seed, actions)
        wins += won
    assert wins / 100 >= WIN_FLOOR[task]


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS)
def test_behaviour_asker_with_a_noisy_person_never_repeats(task):
    for seed in range(100):
        actions, _ = _play(task, "behaviour", seed, NoisyOracle(flip=0.15, free=0.1))
        assert _no_repeat(actions), (seed, actions)


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("policy", ["strong", "behaviour"])
def test_no_repeats_when_the_person_also_denies_right_guesses(task, policy):
    for seed in range(50):
        person = NoisyOracle(flip=0.15, free=0.1, flip_guesses=True)
        actions, _ = _play(task, policy, seed, person)
        assert _no_repeat(actions), (seed, actions)


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("policy", ["strong", "behaviour", "random"])
def test_no_repeats_whatever_the_person_says(task, policy):
    people = [
        Person("No."),
        Person("Yes."),
        Person("no idea"),
        Person("It is big."),
        Person(guess_reply="No."),
        Person(guess_reply="Yes."),
    ]
    for seed, person in enumerate(people):
        actions, won = _play(task, policy, seed, person)
        assert len(actions) == 20 or won, actions  # a yes to the right guess wins
        assert _no_repeat(actions), (person.reply, person.guess_reply, actions)


# (b) the reported sessions: the secret is Chair and the person disagrees with the bank
def test_strong_asker_does_not_repeat_a_denied_guess():
    """The strong guesser asked "Is it a candle?" from question 9 on: its last candidates were
    guessed and denied, the candidate set emptied and it guessed the same one again. Denied, it
    guesses the next likely object instead."""
    guesses = {q.text for q in question_bank().questions if q.guess is not None}
    for seed in range(10):
        actions, _ = _play("twenty-questions", "strong", seed, Person(guess_reply="No."))
        assert len(actions) == 20 and _no_repeat(actions), actions
        assert sum(a in guesses for a in actions) >= 5


@pytest.mark.parametrize("policy", ["strong", "behaviour"])
def test_chair_with_a_person_who_disagrees_with_the_bank(policy):
    """The behaviour guesser asked "Is it a pillow?" 17 times and the strong one repeated a
    candle: now no question comes twice, and the strong asker finds the chair in most seeds."""
    found = 0
    for seed in range(40):
        person = NoisyOracle(flip=0.1, free=0.1, contrary=CHAIR_DISPUTED)
        actions, _ = _play("twenty-questions", policy, seed, person, secret="Chair")
        assert _no_repeat(actions), (seed, actions)
        found += "Is it a chair?\n" in actions
    if policy == "strong":  # measured: 22 of 40 (before: 3 of 40, 96 of 100 repeating)
        assert found >= 20


# (c) against the embedded oracle the askers play exactly as before (tests/test_golden_exports.py
# checks the generated datasets; this checks more seeds of every asker, quickly)
BEFORE = "6446caca421e5dde0c608bcc03fa6c7ba2d6a61114555cf4dde2fdf27502340f"
"""The digest of 300 seeds of every asker on both tasks. Last changed on purpose by issue #13's
last round: Cairo and Alexandria now count as in the Middle East (Guess My City's bank asks it);
before that: some bank answers are now right (an accordion is a keyboard instrument, a calculator
has numbers, a hammer is used for building; Guess My City's hot cities are warm), two facts are
new (desserts, birthdays); the new kinds stay out of the bank. Before that by the oracle2
branch: both oracles know more facts (life cycles, uses, power; ports, islands, coasts, money), so
some bank answers change. Before that, by issue #13 (more correct answers; Guess My City's bank
asks "Is it in North America?" once)."""


def _fingerprint(n: int) -> str:
    h = hashlib.sha256()
    for task in TASKS:
        for policy in ("strong", "behaviour", "random"):
            for seed in range(n):
                ep = envs.run_episode(envs.make(task), envs.make_policy(task, policy), seed)
                h.update(json.dumps([[t.action, t.observation] for t in ep.transitions]).encode())
    return h.hexdigest()


@pytest.mark.slow
def test_play_against_the_embedded_oracle_is_unchanged():
    assert _fingerprint(300) == BEFORE
