"""The persona buyer, message by message: what it understands and how it answers."""

from __future__ import annotations

import random

import pytest
from support.car_dealer_buyer import make, templates

from envs.car_dealer.data import (
    OUTPUT_PREFIX,
    PERSONALITIES,
    Persona,
    parse_output,
    sample_persona,
)


# -- understanding and basic answers ---------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "Hello!",
        "Hi there.",
        "Hey, welcome in!",
        "Good morning, sir.",
        "Welcome to our dealership.",
        "Greetings!",
        "Howdy!",
        "Nice to meet you.",
    ],
)
def test_greetings_are_understood(line: str) -> None:
    b = make()
    reply = b.respond(line)
    assert b.last_understood is True
    assert reply.endswith("\n") and reply.count("\n") == 1
    assert parse_output(reply) is None


@pytest.mark.parametrize(
    "line",
    [
        "What kind of car are you looking for?",
        "What are you looking for today?",
        "How can I help you?",
        "Which brand do you prefer?",
        "What do you have in mind?",
        "Tell me about what you want.",
        "What brings you in today?",
        "Are you in the market for a new car?",
    ],
)
def test_needs_questions_get_the_true_preferences(line: str) -> None:
    b = make()
    reply = b.respond(line)
    assert b.last_understood
    assert "a Toyota SUV" in reply
    assert "sunroof" in reply and "heated seats" in reply


@pytest.mark.parametrize(
    "line",
    [
        "What's your budget?",
        "How much can you spend?",
        "What price range are you thinking of?",
        "How much are you willing to pay?",
        "What can you afford?",
        "Do you have a budget in mind?",
    ],
)
def test_budget_questions_get_the_true_budget(line: str) -> None:
    reply = make().respond(line)
    assert "$30,000" in reply


@pytest.mark.parametrize(
    "line", ["What features do you need?", "Any must-haves?", "Which options matter to you?"]
)
def test_feature_questions_get_the_wanted_features(line: str) -> None:
    reply = make().respond(line)
    assert "sunroof" in reply and "heated seats" in reply


@pytest.mark.parametrize(
    "line",
    [
        "",
        "\n",
        "   ",
        "asdf qwer zxcv",
        "x" * 100_000,
        "漢字かな交じり",
        "\x00\x01\x1b[31m",
        "🙂🙂🙂",
        "...",
        "42",
        "the the the",
        "\t\r\n",
    ],
)
def test_unreadable_lines_get_a_confused_answer(line: str) -> None:
    b = make()
    reply = b.respond(line)
    assert b.last_understood is False
    assert reply.rstrip("\n") in templates("confused")
    assert parse_output(reply) is None


# -- tone ------------------------------------------------------------------------------------
@pytest.mark.parametrize("personality", PERSONALITIES)
def test_confusion_is_in_the_personas_tone(personality: str) -> None:
    b = make(Persona(personality, "a Toyota", "SUV", ("sunroof",), 30000))
    reply = b.respond("zzz qqq")
    assert any(t in reply for t in templates("confused", personality))


@pytest.mark.parametrize("personality", PERSONALITIES)
def test_acceptance_is_in_the_personas_tone(personality: str) -> None:
    b = make(Persona(personality, "a Toyota", "SUV", ("sunroof",), 30000))
    reply = b.respond("The 2022 Toyota RAV4 is $28,000.")
    head = reply.split(OUTPUT_PREFIX)[0]
    assert any(t.format(price="$28,000") in head for t in templates("accept", personality))


# -- honesty over many personas ----------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_preferences_and_budget_are_stated_truthfully(seed: int) -> None:
    p = sample_persona(random.Random(seed))
    b = make(p, seed=seed)
    reply = b.respond("What are you looking for?")
    assert p.brand in reply and p.preferred_type in reply
    if p.personality != "uncommunicative":
        assert f"${p.budget:,}" in b.respond("And your budget?")


@pytest.mark.parametrize("seed", range(4))
def test_never_pays_more_than_its_budget(seed: int) -> None:
    rng = random.Random(seed)
    p = sample_persona(rng)
    b = make(p, seed=seed, pickiness=0.0)
    price = p.budget + 20000
    for _ in range(20):
        reply = b.respond(f"We have {p.preferred_brands} {p.preferred_type} for ${price:,}.")
        d = parse_output(reply)
        if d:
            assert not d.accept or d.buy_price <= p.budget
            break
        price -= 2500


def test_buyer_names_the_car_with_the_year_the_seller_used():
    from envs.car_dealer.text import find_car

    assert find_car("I have a 2022 Subaru Outback for $32,000").name == "2022 Subaru Outback"
    assert find_car("How about a Subaru Outback?").year == find_car("Subaru Outback").year
