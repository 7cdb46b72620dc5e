"""The persona buyer, message by message: offers, prices and decisions."""

from __future__ import annotations

import pytest
from support.car_dealer_buyer import TOYOTA, make, talk, templates

from envs.car_dealer.data import OUTPUT_PREFIX, Persona, parse_output, persona_line
from envs.car_dealer.partner import PersonaBuyer
from envs.core import Text


def test_matching_car_at_a_fair_price_is_bought() -> None:
    b = make()
    reply = b.respond("We have a 2022 Toyota RAV4 with a sunroof for $28,000.")
    d = parse_output(reply)
    assert d is not None and d.accept and d.buy_price == 28000 and d.msrp == 32000
    assert reply.endswith("Output: Decision=Accept MSRP=$32,000 Buy Price=$28,000\n")


def test_car_without_price_makes_the_buyer_ask() -> None:
    b = make()
    reply = b.respond("I'd recommend the 2022 Toyota RAV4.")
    assert any(t in reply for t in ("How much is it?", "What's the price?"))
    assert parse_output(reply) is None
    reply = b.respond("It's $27,500.")
    assert parse_output(reply).buy_price == 27500


@pytest.mark.parametrize(
    "price", ["$40,000", "40k", "$40k", "40,000 dollars", "40000", "40 thousand"]
)
def test_price_spellings_are_read_the_same(price: str) -> None:
    b = make()
    reply = b.respond(f"The 2022 Toyota RAV4 is {price}.")
    assert b.offer is not None and b.offer.asking == 40000
    assert "$30,000" not in reply or "budget" in reply


def test_years_are_not_prices() -> None:
    b = make()
    b.respond("The RAV4 is a 2022 model.")
    assert b.offer is not None and b.offer.asking is None


def test_over_budget_offer_gets_a_counter_within_budget() -> None:
    b = make(pickiness=0.5)
    reply = b.respond("The 2022 Toyota RAV4 is $45,000.")
    assert parse_output(reply) is None
    assert b.counter is not None and b.counter <= 30000
    assert any(s.split("{")[0] in reply for s in templates("over_budget") if s.split("{")[0])


def test_counters_rise_and_never_pass_the_most_it_pays() -> None:
    b = make(haggles=2)
    top = None
    seen = []
    for price in (34000, 33000, 32000, 31500, 31000, 30500):
        reply = b.respond(f"For the 2022 Toyota RAV4 I can do ${price:,}.")
        top = b.max_price(b.offer)
        if parse_output(reply):
            break
        seen.append(b.counter)
    assert seen == sorted(seen)
    assert all(c <= top <= 30000 for c in seen)


def test_seller_accepting_the_counter_closes_the_deal() -> None:
    b = make()
    b.respond("The 2022 Toyota RAV4 is $40,000.")
    c = b.counter
    reply = b.respond("Okay, you've got a deal.")
    d = parse_output(reply)
    assert d and d.accept and d.buy_price == c


def test_meeting_the_counter_with_a_price_closes_the_deal() -> None:
    b = make()
    b.respond("The 2022 Toyota RAV4 is $40,000.")
    d = parse_output(b.respond(f"Alright, ${b.counter:,} it is."))
    assert d and d.accept


def test_firm_fair_price_is_accepted_after_haggling() -> None:
    b = make(haggles=2)
    b.respond("The 2022 Toyota RAV4 is $29,000.")
    assert b.counter is not None and b.counter < 29000
    d = parse_output(b.respond("Sorry, $29,000 is my final price."))
    assert d and d.accept and d.buy_price == 29000


def test_firm_price_above_its_limit_ends_in_rejection() -> None:
    b = make()
    b.respond("The 2022 Toyota RAV4 is $45,000.")
    assert parse_output(b.respond("Sorry, that's the lowest I can go.")) is None
    d = parse_output(b.respond("No, $45,000 is final."))
    assert d and not d.accept and d.msrp == 32000 and d.buy_price is None


def test_repeating_a_too_high_price_ends_in_rejection() -> None:
    b = make()
    replies = talk(b, *["The 2022 Toyota RAV4 is $45,000."] * 3)
    assert parse_output(replies[-1]) is not None and not parse_output(replies[-1]).accept


def test_closing_question_at_a_fair_price_is_accepted() -> None:
    b = make(haggles=1)
    b.respond("The 2022 Toyota RAV4 is $28,000.")
    d = parse_output(b.respond("Do we have a deal at $28,000?"))
    assert d and d.accept and d.buy_price == 28000


def test_wrong_car_is_refused_and_preferences_restated() -> None:
    b = make()
    reply = b.respond("How about the 2023 BMW i4 for $20,000?")
    assert "a Toyota SUV" in reply
    assert b.offer is None and parse_output(reply) is None


def test_three_wrong_cars_end_the_talk() -> None:
    b = make()
    replies = talk(b, "How about the 2023 BMW i4?", "Or the 2022 BMW Z4?", "Or the 2016 BMW 328i?")
    d = parse_output(replies[-1])
    assert d and not d.accept and d.msrp == 15500


def test_generic_brand_and_type_offer_uses_the_quoted_price_as_msrp() -> None:
    b = make(pickiness=0.5)
    d = parse_output(b.respond("We have a Toyota SUV with a sunroof and heated seats for $25,000."))
    assert d and d.accept and d.msrp == 25000 and d.buy_price == 25000


def test_wanted_features_are_acknowledged_once() -> None:
    b = make(haggles=2)
    b.respond("The 2022 Toyota RAV4 is $40,000.")
    r1 = b.respond("It has heated seats, you know.")
    r2 = b.respond("Did I mention the heated seats?")
    assert "heated seats" in r1 and "heated seats" not in r2


def test_missing_wanted_feature_is_noticed_and_lowers_its_limit() -> None:
    b = make(
        pickiness=0.5,
        persona=Persona("polite", "a Toyota", "SUV", ("sunroof", "heated seats"), 90000),
    )
    b.respond("The 2022 Toyota RAV4 is $40,000.")
    before = b.max_price(b.offer)
    reply = b.respond("I should say it has no sunroof.")
    assert "sunroof" in reply
    assert b.max_price(b.offer) < before


def test_claimed_features_raise_the_limit_of_a_generic_car() -> None:
    b = make(
        pickiness=0.5,
        persona=Persona("polite", "a Toyota", "SUV", ("sunroof", "heated seats"), 90000),
    )
    b.respond("We have a Toyota SUV for $60,000.")
    before = b.max_price(b.offer)
    b.respond("It comes with a sunroof and heated seats.")
    assert b.max_price(b.offer) > before


def test_price_without_a_car_asks_which_car() -> None:
    reply = make().respond("I can give you a great price, $20,000.")
    assert any(t in reply for t in templates("what_car"))


def test_patience_runs_out_with_a_rejection() -> None:
    b = make(patience=3)
    replies = talk(b, "Hello!", "Nice to meet you.", "Hi again!")
    assert parse_output(replies[0]) is None and parse_output(replies[1]) is None
    d = parse_output(replies[2])
    assert d and not d.accept and d.msrp == 30000  # no car discussed: the budget


def test_forced_continuation_parses_with_the_prefix() -> None:
    b = make(haggles=2)
    b.respond("The 2022 Toyota RAV4 is $29,000.")
    hist = (
        Text("Start\n", False),
        Text(persona_line(TOYOTA), False),
        Text("Hmm, tell me more." + OUTPUT_PREFIX, True),
    )
    cont = b.act(hist)
    assert cont == "Accept MSRP=$32,000 Buy Price=$29,000\n"
    assert parse_output(OUTPUT_PREFIX + cont).buy_price == 29000


def test_forced_continuation_rejects_without_a_fair_offer() -> None:
    b = make()
    b.respond("The 2022 Toyota RAV4 is $45,000.")
    cont = b.act((Text("Hm." + OUTPUT_PREFIX, True),))
    assert cont == "Reject MSRP=$32,000\n"


def test_after_deciding_it_repeats_its_decision() -> None:
    b = make()
    first = b.respond("The 2022 Toyota RAV4 is $28,000.")
    again = b.act(
        (Text("Start\n", False), Text(persona_line(TOYOTA), False), Text("Anything else?\n", False))
    )
    assert parse_output(first).to_json() == parse_output(again).to_json()


def test_act_reads_the_persona_line_when_not_given_one() -> None:
    b = PersonaBuyer()
    b.reset(None, 1)
    hist = (
        Text("Start\n", False),
        Text(persona_line(TOYOTA), False),
        Text("What's your budget?\n", False),
    )
    assert "$30,000" in b.act(hist) or "rather not" in b.act(hist)
    assert b.persona == TOYOTA


def test_uncommunicative_buyer_may_decline_then_tells_the_budget() -> None:
    quiet = Persona("uncommunicative", "a Honda", "sedan", ("backup camera",), 10000)
    declined = 0
    for seed in range(20):
        b = make(quiet, seed=seed)
        first, second = talk(b, "What's your budget?", "Seriously, what's your budget?")
        declined += "$10,000" not in first
        assert "$10,000" in second
    assert 0 < declined < 20
