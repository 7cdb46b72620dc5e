"""What the Twenty Questions oracle knows beyond single words: what people do with an object and
what it does (verb phrases), where it is worn, numbers of parts, colour versus object names, and
guesses of things that are not on the list. Every failure reported in issue #13 is a case here."""

from __future__ import annotations

import pytest

import envs
from envs.questions.text import stem
from envs.questions.twenty_questions.partner import answer, objects, parse

NAMES = {t.name: i for i, t in enumerate(objects())}

REPORTED = [  # issue #13: each of these was answered wrongly
    ("Motorcycle", "Does it have four wheels?", "No."),
    ("Jacket", "Do you wear it on your feet?", "No."),
    ("Hat", "Do you wear it on your head?", "Yes."),
    ("Refrigerator", "Does it keep food cold?", "Yes."),
    ("Lamp", "Does it give light?", "Yes."),
    ("Cow", "Does it eat grass?", "Yes."),
    ("Fork", "Do you eat with it?", "Yes."),
    ("Carrot", "Is it orange?", "Yes."),
    ("Painting", "Can it take pictures?", "No."),
]

MORE = [
    # paraphrases and inflections of the same facts
    ("Lamp", "Does it give off light?", "Yes."),
    ("Candle", "Does it produce light?", "Yes."),
    ("Chair", "Does it give light?", "No."),
    ("Refrigerator", "Does it keep your drinks cold?", "Yes."),
    ("Toaster", "Does it keep food cold?", "No."),
    ("Sock", "Is it worn on the feet?", "Yes."),
    ("Glove", "Do people wear them on their hands?", "Yes."),
    ("Necklace", "Do you wear it around your neck?", "Yes."),
    ("Ring", "Do you wear it around your neck?", "No."),
    ("Wristwatch", "Can it tell the time?", "Yes."),
    ("Camera", "Can you take photos with it?", "Yes."),
    ("Phone", "Can you make calls with it?", "Yes."),
    # who does it: the object, or a person with it
    ("Cat", "Can it climb trees?", "Yes."),
    ("Ladder", "Can you climb it?", "Yes."),
    ("Cat", "Can you climb it?", "No."),
    ("Spoon", "Do you eat with it?", "Yes."),
    ("Spoon", "Can you eat it?", "No."),
    ("Apple", "Can you eat it?", "Yes."),
    ("Apple", "Do you eat with it?", "No."),
    ("Horse", "Does it eat grass?", "Yes."),
    ("Lion", "Does it eat grass?", "No."),
    ("Dog", "Does it eat?", "Yes."),
    # negation
    ("Shoe", "Do you not wear it on your feet?", "No."),
    ("Hat", "Is it not worn on the feet?", "Yes."),
    # numbers of parts
    ("Car", "Does it have four wheels?", "Yes."),
    ("Bicycle", "Does it have two wheels?", "Yes."),
    ("Bicycle", "Does it have wheels?", "Yes."),
    ("Eagle", "Does it have four legs?", "No."),
    # a colour is not a guess of the fruit; with an article it is
    ("Pumpkin", "Is it orange?", "Yes."),
    ("Pumpkin", "Is it an orange?", "No."),
    ("Orange", "Is it an orange?", "Yes."),
    ("Carrot", "Is it orange in colour?", "Yes."),
    # what it is, not what it has
    ("Headphones", "Is it a speaker?", "No."),
    ("Key", "Is it a lock?", "No."),
    ("Shovel", "Is it a tool?", "Yes."),
    ("Laptop", "Is it a computer?", "Yes."),
    ("Toaster", "Is it electronic?", "Yes."),
    # a verb question asks what it does, not whether it is another object
    ("Wristwatch", "Does it tick?", "Yes."),
    ("Phone", "Can it ring?", "Yes."),
    ("Ring", "Can it ring?", "No."),
    # the subject of the verb: the object, a person, or something else
    ("Carrot", "Do people eat it?", "Yes."),
    ("Carrot", "Do kids eat it?", "Yes."),
    ("Rabbit", "Does it eat carrots?", "Yes."),
    ("Carrot", "Does it eat carrots?", "No."),
    # holding and using
    ("Bookshelf", "Can you store books on it?", "Yes."),
    ("Printer", "Does it need paper?", "Yes."),
    ("Rabbit", "Does it have long ears?", "Yes."),
]


@pytest.mark.parametrize(("secret", "question", "expected"), REPORTED + MORE)
def test_oracle_knows(secret, question, expected):
    reply = answer(question, NAMES[secret])
    assert reply.text == expected and reply.understood, (secret, question, reply)


def test_the_reported_false_win_is_gone():
    task = envs.make("twenty-questions", secret="Painting")
    task.reset(0)
    step = task.step("Can it take pictures?\n")
    assert step.observation == "No.\n" and not step.terminated and step.reward == -1.0
    assert "guess" not in step.info
    # naming the painting still wins
    assert task.step("Is it a painting?\n").terminated


def test_phrase_facts_are_not_no_by_default():
    """Each phrase question is true of the objects it should be and false of the rest."""
    def yes(question):
        return {t.name for i, t in enumerate(objects()) if answer(question, i).text == "Yes."}

    assert yes("Do you wear it on your head?") == {"Hat", "Crown", "Tiara", "Headphones"}
    assert yes("Does it give light?") == {"Lamp", "Sun", "Candle", "Light bulb"}
    assert {"Fork", "Spoon", "Knife"} == yes("Do you eat with it?")
    assert {"Cow", "Horse", "Rabbit"} <= yes("Does it eat grass?") and "Dog" not in yes(
        "Does it eat grass?"
    )


@pytest.mark.parametrize(
    ("question", "named"),
    [("Is it a giraffe?", "giraffe"), ("Is it a rugby ball?", "rugby ball"),
     ("Could it be an aloe plant?", "aloe plant"), ("Is it a kind of spaceship?", "spaceship")],
)  # fmt: skip
def test_guessing_something_not_on_the_list_is_a_wrong_guess(question, named):
    assert parse(question).unlisted == named
    reply = answer(question, NAMES["Dog"])
    assert reply.text == "No." and reply.understood and "not on the list" in reply.detail
    task = envs.make("twenty-questions", secret="Dog")
    task.reset(0)
    step = task.step(question + "\n")
    assert step.observation == "No.\n" and not step.terminated and step.reward == -1.0
    assert step.info["guess"] == named and step.info["unlisted"] is True
    assert step.info["understood"] is True
    assert task.state()["transcript"][-1]["unlisted"] is True


@pytest.mark.parametrize(
    "question", ["Is it a mammal?", "Is it a household item?", "Is it a big cat?",
                 "Is it a piece of furniture?", "Is it a musical instrument?"],
)  # fmt: skip
def test_kinds_are_not_unlisted_guesses(question):
    assert parse(question).unlisted is None and parse(question).atoms


def test_stems_join_inflections():
    assert stem("gives") == stem("giving") == stem("give") == stem("gave")
    assert stem("worn") == stem("wearing") == stem("wear")
    assert stem("feet") == stem("foot") and stem("pictures") == stem("picture")
