"""The embedded Guess My City oracle: yes/no and open questions, never naming the city."""

from __future__ import annotations

import pytest

from envs.questions.guess_city.partner import NOT_SURE, answer, cities, parse
from envs.questions.guess_city.policies import OPEN_QUESTIONS, question_bank
from envs.questions.text import fold

NAMES = {c.name: i for i, c in enumerate(cities())}

CASES = [
    # continent, region, country, demonyms
    ("Delhi", "Is it in Asia?", "Yes."),
    ("Delhi", "Is it in Europe?", "No."),
    ("Delhi", "Is it an Asian city?", "Yes."),
    ("Delhi", "Is it in South Asia?", "Yes."),
    ("Delhi", "Is it in India?", "Yes."),
    ("Delhi", "Is it an Indian city?", "Yes."),
    ("Delhi", "Is it in Pakistan?", "No."),
    ("Paris", "Is it in Europe?", "Yes."),
    ("Paris", "Is it in Western Europe?", "Yes."),
    ("Paris", "Is it French?", "Yes."),
    ("New York", "Is it in the USA?", "Yes."),
    ("New York", "Is it in America?", "Yes."),
    ("New York", "Is it in North America?", "Yes."),
    ("New York", "Is it in South America?", "No."),
    ("Lagos", "Is it in Africa?", "Yes."),
    ("Lagos", "Is it in West Africa?", "Yes."),
    ("Sydney", "Is it in Australia?", "Yes."),
    ("Sydney", "Is it in Oceania?", "Yes."),
    ("Istanbul", "Is it in Europe?", "Yes."),
    ("Istanbul", "Is it in Asia?", "Yes."),
    ("Mexico City", "Is it in Latin America?", "Yes."),
    ("Stockholm", "Is it in Scandinavia?", "Yes."),
    # languages (a demonym after "speak" is the language)
    ("Delhi", "Do they speak Hindi?", "Yes."),
    ("Delhi", "Is English spoken there?", "Yes."),
    ("Delhi", "Do people speak Spanish there?", "No."),
    ("Paris", "Do they speak French?", "Yes."),
    ("Mexico City", "Is it a Spanish-speaking city?", "Yes."),
    ("Mexico City", "Is it in Spain?", "No."),
    ("Sao Paulo", "Do people there speak Portuguese?", "Yes."),
    # climate and weather
    ("Delhi", "Is it hot?", "Yes."),
    ("Delhi", "Does it snow there?", "No."),
    ("Moscow", "Does it snow there?", "Yes."),
    ("Moscow", "Is it cold in winter?", "Yes."),
    ("Singapore", "Is the climate tropical?", "Yes."),
    ("Cairo", "Is it in the desert?", "Yes."),
    ("Cairo", "Is it rainy?", "No."),
    ("London", "Is it rainy?", "Yes."),
    ("Rome", "Does it have a Mediterranean climate?", "Yes."),
    # coast, sea, river, capital, hemispheres, tropics
    ("Mumbai", "Is it on the coast?", "Yes."),
    ("Mumbai", "Is it by the sea?", "Yes."),
    ("Mumbai", "Is it on the Arabian Sea?", "Yes."),
    ("Delhi", "Is it on the coast?", "No."),
    ("Delhi", "Is it landlocked?", "Yes."),
    ("Lisbon", "Is it on the Atlantic?", "Yes."),
    ("Lisbon", "Is it on the Pacific Ocean?", "No."),
    ("Cairo", "Is it on the Nile river?", "Yes."),
    ("Cairo", "Does a river run through it?", "Yes."),
    ("Delhi", "Is it a capital city?", "Yes."),
    ("Delhi", "Is it the capital of India?", "Yes."),
    ("Mumbai", "Is it a capital?", "No."),
    ("Sydney", "Is it in the southern hemisphere?", "Yes."),
    ("Sydney", "Is it north of the equator?", "No."),
    ("London", "Is it in the western hemisphere?", "Yes."),
    ("Singapore", "Is it in the tropics?", "Yes."),
    # population
    ("Delhi", "Does it have more than 10 million people?", "Yes."),
    ("Delhi", "Do fewer than 5 million people live there?", "No."),
    ("Oslo", "Do fewer than 5 million people live there?", "Yes."),
    ("Oslo", "Is it a megacity?", "No."),
    ("Tokyo", "Is it a megacity?", "Yes."),
    # foods and landmarks
    ("Delhi", "Is it known for butter chicken?", "Yes."),
    ("Rome", "Is it famous for pizza?", "Yes."),
    ("Paris", "Is the Eiffel Tower there?", "Yes."),
    ("London", "Is the Eiffel Tower there?", "No."),
    # negation and disjunction
    ("Delhi", "Is it not in Asia?", "No."),
    ("Delhi", "Is it in Europe or Asia?", "It is in Asia."),
    # guesses, aliases, accents
    ("Delhi", "Is it Delhi?", "Yes."),
    ("Delhi", "Is your city New Delhi?", "Yes."),
    ("Delhi", "Is it Mumbai?", "No."),
    ("Mumbai", "Is it Bombay?", "Yes."),
    ("Sao Paulo", "Is it São Paulo?", "Yes."),
    ("Beijing", "Are you from Peking?", "Yes."),
    # open questions: one sentence
    ("Delhi", "What continent is it in?", "It is in Asia."),
    ("Istanbul", "Which continent is it on?", "It lies in both Europe and Asia."),
    ("Delhi", "What country is it in?", "It is in India."),
    (
        "Singapore",
        "What country is it in?",
        "It is a city-state, so naming its country would give it away.",
    ),
    (
        "Delhi",
        "What languages do people speak there?",
        "People there mainly speak Hindi, English, Punjabi and Urdu.",
    ),
    ("Rome", "What is the weather like?", "It has hot, dry summers and mild, wet winters."),
    ("Delhi", "What food is it known for?", "It is known for butter chicken, chaat and paratha."),
    (
        "Delhi",
        "How many people live there?",
        "About 32 million people live in its metropolitan area.",
    ),
    ("Oslo", "What is the population?", "About 1.6 million people live in its metropolitan area."),
    ("Mumbai", "Which sea or ocean is it on?", "It lies on the Arabian Sea, on the west coast."),
    ("Delhi", "Which sea is it near?", "It is inland, not on the coast."),
    ("Cairo", "What river runs through it?", "The Nile river runs through it."),
    ("Sydney", "Which hemisphere is it in?", "It is in the southern and eastern hemispheres."),
    ("Lagos", "Where is it?", "It is in West Africa."),
    ("Delhi", "What is the name of your city?", "I can't tell you its name; you have to guess it."),
    ("Delhi", "Is the weather nice?", "It is fairly dry, with hot summers and little rain."),
    # not understood
    ("Delhi", "What is the currency?", "They pay with the indian rupee."),
    ("Delhi", "blorf?", NOT_SURE),
    ("Delhi", "", NOT_SURE),
    ("Delhi", "Is it near Mumbai?", "No."),
]


@pytest.mark.parametrize(("city", "question", "expected"), CASES)
def test_oracle_answers(city, question, expected):
    assert answer(question, NAMES[city]).text == expected


def test_not_understood_is_marked():
    for q in ("Who is the mayor?", "blorf?", "", "\x00\x01"):
        r = answer(q, NAMES["Delhi"])
        assert r.text == NOT_SURE and r.understood is False
    assert answer("Is it in Asia?", 0).understood is True


def test_knowledge_base_size_and_facts():
    cs = cities()
    assert len(cs) >= 100
    assert len({c.country for c in cs}) >= 50 and len({x for c in cs for x in c.continents}) == 6
    for c in cs:
        assert (
            c.langs
            and c.foods
            and c.sights
            and c.climate
            in (
                "tropical",
                "arid",
                "semi-arid",
                "mediterranean",
                "humid subtropical",
                "oceanic",
                "continental",
                "highland",
            )
        ), c.name
    aliases = [a for c in cs for a in {fold(x) for x in c.aliases}]
    assert len(aliases) == len(set(aliases))


def test_open_answers_never_name_the_city():
    for i, c in enumerate(cities()):
        names = [fold(a) for a in c.aliases]
        for q in OPEN_QUESTIONS + ("Give me a hint.", "What is it famous for?"):
            text = fold(answer(q, i).text)
            assert not any(f" {n} " in f" {text.strip('.')} " for n in names), (c.name, q, text)


def test_guess_targets():
    assert parse("Is it Delhi?").target == NAMES["Delhi"]
    assert parse("Is your city Rio?").target == NAMES["Rio de Janeiro"]
    assert parse("Is it near Delhi?").target is None
    assert parse("Is it in Asia?").target is None


def test_bank_questions_are_understood():
    bank = question_bank()
    for q in bank.questions:
        assert answer(q.text, 0).understood, q.text
    assert sorted(bank.guesses) == list(range(len(cities())))
