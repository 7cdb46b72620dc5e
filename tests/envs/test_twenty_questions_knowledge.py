"""Knowledge kinds of the Twenty Questions oracle: life cycles, how food is eaten and grown,
power sources, uses and sounds (worded unlike the benchmark sets)."""

import pytest

from envs.questions.twenty_questions.data import objects
from envs.questions.twenty_questions.partner import answer

INDEX = {t.name: i for i, t in enumerate(objects())}

CASES = [
    ("Frog", "Is it a tadpole when it is young?", "Yes."),
    ("Butterfly", "Does it come from a caterpillar?", "Yes."),
    ("Cat", "Can it purr?", "Yes."),
    ("Dog", "Can it purr?", "No."),
    ("Dolphin", "Can it swim fast?", "Yes."),
    ("Potato", "Is it eaten raw?", "No."),
    ("Carrot", "Can you eat it raw?", "Yes."),
    ("Banana", "Do you eat the peel?", "No."),
    ("Apple", "Do you eat the skin?", "Yes."),
    ("Watermelon", "Does it grow on a vine?", "Yes."),
    ("Mushroom", "Is it a fungus?", "Yes."),
    ("Remote control", "Does it need batteries?", "Yes."),
    ("Toaster", "Does it need batteries?", "No."),
    ("Printer", "Does it need ink?", "Yes."),
    ("Hammer", "Is it for hammering in nails?", "Yes."),
    ("Accordion", "Do you squeeze it to play?", "Yes."),
    ("Rubber duck", "Do kids play with it in the bathtub?", "Yes."),
    ("Umbrella", "Does it keep the rain off you?", "Yes."),
    ("Rainbow", "Does it usually appear after a storm?", "Yes."),
]


@pytest.mark.parametrize(("secret", "question", "expected"), CASES)
def test_knowledge(secret: str, question: str, expected: str) -> None:
    assert answer(question, INDEX[secret]).text == expected


def test_related_name_is_a_wrong_guess() -> None:
    """A toad is not the frog: naming it must be a wrong guess, not a win."""
    assert answer("Is it a toad?", INDEX["Frog"]).text == "No."


def test_every_name_guess_is_exact() -> None:
    things = objects()
    for i in range(len(things)):
        for j, u in enumerate(things):
            assert (answer(f"Is it a {u.name.lower()}?", i).text == "Yes.") == (i == j)


@pytest.mark.parametrize(
    ("secret", "question"),
    [
        ("Butterfly", "Is it a cocoon?"),
        ("Car", "Is it a motor?"),
        ("Elephant", "Is it a tusk?"),
        ("Cherry", "Is it a pit?"),
    ],
)
def test_part_or_stage_is_a_wrong_guess(secret: str, question: str) -> None:
    """Naming a part or a life stage of the object asks what it is: a wrong guess."""
    reply = answer(question, INDEX[secret])
    assert reply.text == "No." and reply.understood


@pytest.mark.parametrize(
    ("secret", "question", "expected"),
    [
        ("Saw", "Would a carpenter use it?", "Yes."),
        ("Saw", "Would a chef use it?", "No."),
        ("Cello", "Do musicians play it?", "Yes."),
        ("Broccoli", "Is it good for you?", "Yes."),
        ("Laptop", "Is it portable?", "Yes."),
        ("Refrigerator", "Is it portable?", "No."),
        ("Lawn mower", "Is it motorized?", "Yes."),
    ],
)
def test_who_uses_it_and_more(secret: str, question: str, expected: str) -> None:
    assert answer(question, INDEX[secret]).text == expected
