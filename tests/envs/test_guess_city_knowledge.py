"""What the Guess My City oracle knows beyond single words: rivers by name, the side of the road,
states and provinces, nearby features and cities, either-or questions (an open answer naming the
right alternative), and guesses of places that are none of the cities. Every failure reported in
issue #13 is a case here."""

from __future__ import annotations

import pytest

import envs
from envs.questions.guess_city.partner import answer, cities, parse
from envs.questions.guess_city.policies import bank_questions

NAMES = {c.name: i for i, c in enumerate(cities())}

REPORTED = [  # issue #13: each of these was answered wrongly
    ("Cairo", "Does the Nile flow through it?", "Yes."),
    ("London", "Do people drive on the left there?", "Yes."),
    ("Sydney", "Is it in the northern or southern hemisphere?", "It is in the southern hemisphere."),
]

MORE = [
    ("Paris", "Does the Nile flow through it?", "No."),
    ("Vienna", "Is the Danube there?", "Yes."),
    ("Paris", "Do people drive on the left there?", "No."),
    ("Paris", "Do they drive on the right side of the road?", "Yes."),
    ("Tokyo", "Do people drive on the left?", "Yes."),
    ("Hong Kong", "Do people drive on the left there?", "Yes."),
    ("Shanghai", "Do people drive on the left there?", "No."),
    ("Houston", "Is it in Texas?", "Yes."),
    ("Chicago", "Is it in Texas?", "No."),
    ("Manchester", "Is it in Scotland?", "No."),
    ("Seoul", "Is it in North Korea?", "No."),
    ("Munich", "Is it near the Alps?", "Yes."),
    ("Berlin", "Is it near the Alps?", "No."),
    ("Tianjin", "Is it near Beijing?", "Yes."),
    ("Alexandria", "Is it on the Mediterranean?", "Yes."),
    ("Rome", "Does it have a Mediterranean climate?", "Yes."),
    # either-or questions get the alternative that holds, in the asker's words
    ("London", "Is it in the northern or southern hemisphere?", "It is in the northern hemisphere."),
    ("Cairo", "Is it in Africa or Asia?", "It is in Africa."),
    ("Madrid", "Is it inland or on the coast?", "It is inland."),
    ("Lisbon", "Is it inland or on the coast?", "It is on the coast."),
    ("Istanbul", "Is it in Europe or Asia?", "Both: it is in Europe and in Asia."),
    ("Lima", "Is it in Europe or Africa?", "Neither: it is not in Europe, nor in Africa."),
    ("Sydney", "Is it a capital or not?", "It is not a capital."),
    ("Ankara", "Is it a capital or not?", "It is a capital."),
    ("Berlin", "Is it in Europe or South America?", "It is in Europe."),
    # the biggest city of its country, city-states, weather all year round
    ("Sao Paulo", "Is it the largest city in Brazil?", "Yes."),
    ("Brasilia", "Is it the largest city in Brazil?", "No."),
    ("Singapore", "Is it a city state?", "Yes."),
    ("Bangkok", "Is it a city state?", "No."),
    ("Singapore", "Is it hot all year round?", "Yes."),
    ("Beijing", "Is it hot all year round?", "No."),
    ("Beijing", "Is it hot?", "Yes."),
]


@pytest.mark.parametrize(("secret", "question", "expected"), REPORTED + MORE)
def test_oracle_knows(secret, question, expected):
    reply = answer(question, NAMES[secret])
    assert reply.text == expected and reply.understood, (secret, question, reply)


def test_an_either_or_answer_never_names_the_city():
    for i, c in enumerate(cities()):
        text = answer("Is it in the northern or southern hemisphere?", i).text
        assert text.startswith("It is in the") and c.name not in text


@pytest.mark.parametrize(
    ("question", "named"),
    [("Is it Kyoto?", "Kyoto"), ("Are you from abu dhabi?", "abu dhabi"),
     ("Is your city Abu Dhabi?", "Abu Dhabi"),
     ("Are you from Gold Coast?", "Gold Coast"), ("Is it Zanzibar?", "Zanzibar")],
)  # fmt: skip
def test_guessing_a_place_that_is_no_city_is_a_wrong_guess(question, named):
    assert parse(question).unlisted == named
    task = envs.make("guess-city", secret="Tokyo")
    task.reset(0)
    step = task.step(question + "\n")
    assert step.observation == "No.\n" and not step.terminated and step.reward == -1.0
    assert step.info["guess"] == named and step.info["unlisted"] is True
    assert step.info["understood"] is True


@pytest.mark.parametrize(
    "question", ["Is it Asian?", "Is it Mediterranean?", "Is it sunny?", "Is your city big?",
                 "Is your city sunny?", "Are you from Asia?", "Is it in Kyoto?"],
)  # fmt: skip
def test_facts_are_not_guesses(question):
    assert parse(question).unlisted is None


def test_the_bank_asks_each_question_once():
    texts = [q for q, _ in bank_questions(cities())]
    assert len(texts) == len(set(texts))
    assert texts.count("Is it in North America?\n") == 1
