"""Scripted Car Dealer sellers answer what the buyer asked for: the make, model or type asked for
when it is on the lot, else a stated unavailability and the closest match, never an unrelated car."""

from __future__ import annotations

import pytest

import envs
from envs.car_dealer.data import Car, Wishes, answer, inventory
from envs.car_dealer.text import find_car, read_request
from envs.core import Text, run_episode

SELLERS = ("behaviour", "strong")
NEUTRAL = ("My budget is $60,000.", "I'd like a sunroof.", "Hmm, let me think.", "Go on.")


def first_offer(policy: str, seed: int, *buyer: str) -> tuple[str, Car]:
    """Talk to the seller (the buyer's lines, then neutral ones) until it names a car."""
    seller = envs.make_policy("car-dealer", policy)
    seller.reset(None, seed)
    history = [Text("Start\n", False)]
    for said in (*buyer, *NEUTRAL * 3):
        line = seller.act(tuple(history))
        car = find_car(line)
        if car is not None and len(history) > 2 * len(buyer):
            return line, car
        history += [Text(line, True), Text(said + "\n", False)]
    raise AssertionError(f"{policy} seed {seed} never offered a car")


@pytest.mark.parametrize("policy", SELLERS)
@pytest.mark.parametrize("seed", range(12))
def test_a_buyer_asking_for_a_tesla_is_offered_a_tesla(policy: str, seed: int) -> None:
    line, car = first_offer(policy, seed, "Hi, I want a Tesla.")
    assert car.brand == "Tesla", line
    assert "don't have" not in line


@pytest.mark.parametrize("policy", SELLERS)
@pytest.mark.parametrize("seed", range(8))
def test_a_brand_and_type_asked_for_are_offered_together(policy: str, seed: int) -> None:
    line, car = first_offer(policy, seed, "Hello. I'm looking for a Toyota SUV.")
    assert car.brand == "Toyota" and "SUV" in car.types, line


@pytest.mark.parametrize("policy", SELLERS)
@pytest.mark.parametrize("seed", range(8))
def test_what_is_not_stocked_is_said_and_the_closest_match_offered(policy: str, seed: int) -> None:
    assert not any(c.brand == "Porsche" and "truck" in c.types for c in inventory())
    line, car = first_offer(policy, seed, "Do you have a Porsche truck?")
    assert line.startswith(
        "We don't have a Porsche truck in stock right now. The closest match is the "
    ), line
    assert car.brand == "Porsche" or "truck" in car.types


@pytest.mark.parametrize("policy", SELLERS)
@pytest.mark.parametrize("seed", range(6))
def test_a_model_asked_for_by_name_replaces_the_car_under_discussion(
    policy: str, seed: int
) -> None:
    seller = envs.make_policy("car-dealer", policy)
    seller.reset(None, seed)
    history = [Text("Start\n", False)]
    for said in ("I want a Ford truck.", *NEUTRAL):
        line = seller.act(tuple(history))
        history += [Text(line, True), Text(said + "\n", False)]
        if find_car(line) is not None:
            break
    assert find_car(history[-2].text).brand == "Ford"
    history[-1] = Text("Actually, do you have the Tesla Model Y?\n", False)
    line = seller.act(tuple(history))
    assert find_car(line).name == "2023 Tesla Model Y", line


@pytest.mark.parametrize("policy", SELLERS)
def test_what_the_buyer_rules_out_is_not_a_request(policy: str) -> None:
    for seed in range(6):
        line, car = first_offer(
            policy, seed, "I want a Honda, not a Ford. Nothing like the Mustang."
        )
        assert car.brand == "Honda", line


def test_read_request() -> None:
    r = read_request("Do you have a Tesla Model 3? Not a BMW.")
    assert r.brands == ["Tesla"] and r.model is not None and r.model.model == "Model 3"
    assert (
        read_request("The 2022 Toyota RAV4 sounds good.", ignore="2022 Toyota RAV4").names_a_car
        is False
    )
    assert read_request("I'd rather have an electric car with a sunroof").types == ["electric"]
    assert read_request("It has no sunroof, though.").features == []
    for said in (
        "No I want a Tesla",
        "I don't want a Ford but a Tesla",
        "I want a Tesla instead of a BMW",
        "Nothing like the Mustang, I want a Tesla",
        "Not a BMW. A Tesla!",
    ):
        assert read_request(said).brands == ["Tesla"], said
    assert read_request("Anything but a BMW").brands == []


def test_answer_when_what_was_asked_for_is_gone() -> None:
    w = Wishes(brand="Tesla")
    cars, note = answer(w, [c.name for c in inventory() if c.brand == "Tesla"])
    assert (
        cars == [] and note == "We don't have a Tesla car or anything like it in stock right now."
    )
    w = Wishes(brand="Tesla", ctype="electric")
    cars, note = answer(w, [c.name for c in inventory() if c.brand == "Tesla"], budget=30000)
    assert note == "We have no other Tesla electric car in stock."
    assert cars and all("electric" in c.types for c in cars)
    assert abs(cars[0].price - 30000) == min(abs(c.price - 30000) for c in cars)


@pytest.mark.parametrize("policy", SELLERS)
def test_with_the_persona_buyer_every_offer_answers_its_wishes(policy: str) -> None:
    """Once the buyer has said what it wants, each car offered is that, or the closest match
    after saying so; it always shares the brand or the type."""
    offers = fitting = 0
    for seed in range(60):
        task = envs.make("car-dealer")
        ep = run_episode(task, envs.make_policy("car-dealer", policy), seed)
        p = task.persona
        told = False
        for t in ep.transitions:
            car = find_car(t.action)
            if (
                told
                and car is not None
                and "closest match" not in t.action
                and "Remember" not in t.action
            ):
                offers += 1
                fits = car.brand == p.brand and p.preferred_type in car.types
                assert fits or not any(
                    c.brand == p.brand and p.preferred_type in c.types and c.name != car.name
                    for c in inventory()
                ), (seed, t.action)
                fitting += fits
            elif told and car is not None and "closest match" in t.action:
                assert car.brand == p.brand or p.preferred_type in car.types, (seed, t.action)
            told = told or p.brand in t.observation
    assert offers > 20 and fitting / offers > 0.6


def talk(policy: str, seed: int, *buyer: str) -> list[str]:
    """The seller's lines as a person answers with ``buyer``'s lines, one each."""
    seller = envs.make_policy("car-dealer", policy)
    seller.reset(None, seed)
    history, said = [Text("Start\n", False)], []
    for line in buyer:
        said.append(seller.act(tuple(history)))
        history += [Text(said[-1], True), Text(line + "\n", False)]
    return said + [seller.act(tuple(history))]


def offered_prices(lines: list[str]) -> list[tuple[Car, int]]:
    """(car, price) of each line that names a car and a price."""
    from envs.car_dealer.text import find_prices

    out = []
    for line in lines:
        car, prices = find_car(line), find_prices(line)
        if car is not None and prices:
            out.append((car, prices[-1]))
    return out


@pytest.mark.parametrize(
    "said",
    [
        "Hi, I want an SUV, not more than 10 grand.",
        "An SUV please. $15,000 max.",
        "An SUV, at most 12k.",
        "I'm after an SUV and I can only spend $14,000.",
        "Any SUV under 13,000 dollars.",
    ],
)
@pytest.mark.parametrize("seed", range(4))
def test_the_strong_seller_offers_within_a_budget_said_as_a_person_says_it(
    said: str, seed: int
) -> None:
    """A person's way of naming the most they pay is the budget: the strong seller offers a car
    it can sell for that (it asked for the budget again, then pitched an $81,200 car)."""
    from envs.car_dealer.text import find_prices

    budget = find_prices(said)[-1]
    lines = talk("strong", seed, said, "Leather seats.", "Go on.", "Go on.")
    assert not any("budget" in line for line in lines[1:]), lines  # not asked again
    offers = offered_prices(lines)
    assert offers and all(price <= budget for _, price in offers), lines


@pytest.mark.parametrize("seed", range(4))
def test_the_strong_seller_offers_another_car_when_told_the_budget_after_its_offer(
    seed: int,
) -> None:
    lines = talk(
        "strong",
        seed,
        "I'd rather not say.",
        "An SUV with leather seats.",
        "Hmm.",
        "Too much. 10k max.",
    )
    offers = offered_prices(lines)
    first, later = offers[0], offers[-1]
    assert first[1] > 12_500 and later[0] != first[0] and later[1] <= 10_000, lines
    assert "over your budget" in lines[-1]
