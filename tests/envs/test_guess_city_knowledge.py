"""Knowledge kinds of the Guess My City oracle: ports, islands, which coast, money, states,
continents spanned, age, sunshine and what a city is known for (worded unlike the benchmark)."""

import pytest

from envs.questions.guess_city.data import cities
from envs.questions.guess_city.partner import answer

INDEX = {c.name: i for i, c in enumerate(cities())}

YES_NO = [
    ("Shanghai", "Is it an important seaport?", "Yes."),
    ("Madrid", "Is it a port?", "No."),
    ("Singapore", "Is the city on an island?", "Yes."),
    ("Berlin", "Is it on an island?", "No."),
    ("Sydney", "Is it on the east coast?", "Yes."),
    ("Seattle", "Is it on the east coast?", "No."),
    ("Lisbon", "Do they pay with euros?", "Yes."),
    ("London", "Do they pay with euros?", "No."),
    ("Tokyo", "Is the yen used there?", "Yes."),
    ("Cairo", "Is it in two continents?", "No."),
    ("Athens", "Is it an ancient city?", "Yes."),
    ("Brasilia", "Is it an ancient city?", "No."),
    ("Dubai", "Is it sunny most of the time?", "Yes."),
    ("Bangalore", "Is it famous for its tech industry?", "Yes."),
    ("Sydney", "Do people drive on the left side of the road?", "Yes."),
    ("Tokyo", "Does it get earthquakes?", "Yes."),
    ("Amsterdam", "Is much of it below sea level?", "Yes."),
    ("Milan", "Is it a fashion capital?", "Yes."),
    ("Munich", "Is it in the south of Germany?", "Yes."),
    ("Hamburg", "Is it in southern Germany?", "No."),
    ("Chengdu", "Is it in western China?", "Yes."),
    ("Kolkata", "Is it a former capital of India?", "Yes."),
    ("Delhi", "Is it a former capital?", "No."),
    ("Singapore", "Was it once a British colony?", "Yes."),
    ("Dhaka", "Is it very crowded?", "Yes."),
]


@pytest.mark.parametrize(("city", "question", "expected"), YES_NO)
def test_yes_no(city: str, question: str, expected: str) -> None:
    assert answer(question, INDEX[city]).text == expected


@pytest.mark.parametrize(
    ("city", "question", "part"),
    [
        ("Tokyo", "What money do people use there?", "yen"),
        ("Houston", "Which state is the city in?", "Texas"),
        ("Toronto", "What province is it in?", "Ontario"),
        ("Los Angeles", "Is it on the west coast or the east coast?", "west"),
        ("Chennai", "Which coast of India is it on?", "east"),
    ],
)
def test_open(city: str, question: str, part: str) -> None:
    reply = answer(question, INDEX[city]).text
    assert part.lower() in reply.lower()
    assert city.lower() not in reply.lower()
