"""Ordinary questions written for issue #13's last round, by kind of question: categories,
paraphrases, materials, sizes, places, sounds, uses, who plays with it (Twenty Questions);
hemispheres, landmarks, food, language, climate, rivers, coast, driving side, capitals, the
Olympics (Guess My City). Each answer is what a person would expect; guesses of near-synonyms of
other things ("mitten" for a glove) are wrong guesses that never win."""

from __future__ import annotations

from pathlib import Path

import pytest

import envs
from envs.questions.guess_city.partner import answer as city_answer
from envs.questions.guess_city.partner import cities
from envs.questions.twenty_questions.partner import answer, objects

OBJECTS = {t.name: i for i, t in enumerate(objects())}
CITIES = {c.name: i for i, c in enumerate(cities())}

CASES = Path(__file__).parent / "data" / "everyday_questions.txt"


def _cases(task: str) -> list[tuple[str, str, str]]:
    """``(secret, question, "Yes." or "No.")`` of one task from :data:`CASES`."""
    rows = [line.split("|") for line in CASES.read_text("utf-8").splitlines()]
    return [
        (s, q, "Yes." if a == "yes" else "No.")
        for t, s, q, a in (r for r in rows if len(r) == 4)
        if t == task
    ]


TWENTY_QUESTIONS = _cases("twenty-questions")
GUESS_CITY = _cases("guess-city")


def _wrong(cases, names, reply) -> list[tuple[str, str, str, str]]:
    return [(s, q, want, got) for s, q, want in cases if (got := reply(q, names[s]).text) != want]


def test_twenty_questions_everyday_questions():
    assert len(TWENTY_QUESTIONS) > 400
    assert _wrong(TWENTY_QUESTIONS, OBJECTS, answer) == []


def test_guess_city_everyday_questions():
    assert len(GUESS_CITY) > 250
    assert _wrong(GUESS_CITY, CITIES, city_answer) == []


def _play(task: str, secret: str, question: str):
    t = envs.make(task)
    t.reset(0, {"secret": secret})
    step = t.step(question + "\n")
    return step.observation.strip(), bool(step.terminated and step.info.get("success"))


@pytest.mark.parametrize(
    ("secret", "question"),
    [
        ("Glove", "Is it a mitten?"),
        ("Orange", "Is it a tangerine?"),
        ("Flower", "Is it a rose?"),
        ("Horse", "Is it a pony?"),
        ("Jacket", "Is it a coat?"),
        ("Pillow", "Is it a cushion?"),
        ("River", "Is it a stream?"),
        ("Toy car", "Is it a toy truck?"),
        ("Chair", "Is it a stool?"),
        ("Watermelon", "Is it a melon?"),
        ("Paintbrush", "Is it a brush?"),
        ("Apple", "Is it apple juice?"),
        ("Orange", "Is it orange juice?"),
    ],
)
def test_twenty_questions_near_synonyms_never_win(secret, question):
    _, won = _play("twenty-questions", secret, question)
    assert not won


@pytest.mark.parametrize(
    "question",
    [
        "Is it a chair?",
        "Chair?",
        "Is the answer a chair?",
        "I think it's a chair.",
        "Are you thinking of a chair?",
        "My guess is chair",
        "Could it be a chair?",
        "Would you call it a chair?",
    ],
)
def test_twenty_questions_ways_of_guessing_right_win(question):
    assert _play("twenty-questions", "Chair", question) == ("Yes.", True)


@pytest.mark.parametrize(
    "question",
    [
        "Is it Paris?",
        "Paris?",
        "Is it Paris, France?",
        "Are you thinking of Paris?",
        "I think it's Paris.",
        "Do you live in Paris?",
    ],
)
def test_guess_city_ways_of_guessing_right_win(question):
    assert _play("guess-city", "Paris", question) == ("Yes.", True)


@pytest.mark.parametrize(
    ("secret", "question", "expect"),
    [
        ("Tehran", "It's the capital of which country?", "iran"),
        ("Dublin", "It's the capital of which country?", "ireland"),
    ],
)
def test_guess_city_wh_word_inside_is_open_and_never_names_the_city(secret, question, expect):
    said, won = _play("guess-city", secret, question)
    assert expect in said.lower() and secret.lower() not in said.lower() and not won
