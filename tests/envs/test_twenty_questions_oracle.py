"""The embedded Twenty Questions oracle: questions and the answers a person would expect."""

from __future__ import annotations

import pytest

from envs.questions.twenty_questions.partner import answer, objects, parse

NAMES = {t.name: i for i, t in enumerate(objects())}

# (secret, question, expected answer)
CASES = [
    # kinds and categories, plurals and "a kind of"
    ("Dog", "Is it an animal?", "Yes."),
    ("Dog", "Is it a mammal?", "Yes."),
    ("Dog", "Is it a kind of pet?", "Yes."),
    ("Dog", "Is it a bird?", "No."),
    ("Eagle", "Is it a bird?", "Yes."),
    ("Eagle", "Is it one of the birds?", "Yes."),
    ("Apple", "Is it a fruit?", "Yes."),
    ("Apple", "Are they fruits?", "Yes."),
    ("Carrot", "Is it a vegetable?", "Yes."),
    ("Car", "Is it a vehicle?", "Yes."),
    ("Car", "Is it a type of vehicle?", "Yes."),
    ("Guitar", "Is it a musical instrument?", "Yes."),
    ("Guitar", "Is it an instrument?", "Yes."),
    ("Hammer", "Is it a tool?", "Yes."),
    ("Ring", "Is it jewellery?", "Yes."),
    ("Ring", "Is it a piece of jewelry?", "Yes."),
    # alive, natural, man-made, electronic, edible
    ("Dog", "Is it alive?", "Yes."),
    ("Dog", "Is it a living thing?", "Yes."),
    ("Car", "Is it alive?", "No."),
    ("Car", "Is it inanimate?", "Yes."),
    ("Car", "Is it man-made?", "Yes."),
    ("Tree", "Is it man made?", "No."),
    ("Tree", "Is it natural?", "Yes."),
    ("Television", "Is it electronic?", "Yes."),
    ("Television", "Does it use electricity?", "Yes."),
    ("Chair", "Is it electronic?", "No."),
    ("Apple", "Can you eat it?", "Yes."),
    ("Apple", "Is it edible?", "Yes."),
    ("Apple", "Is it food?", "Yes."),
    ("Car", "Can you eat it?", "No."),
    # size against a breadbox and other references
    ("Car", "Is it bigger than a breadbox?", "Yes."),
    ("Pen", "Is it bigger than a breadbox?", "No."),
    ("Pen", "Is it smaller than a bread box?", "Yes."),
    ("Pen", "Can you hold it in your hand?", "Yes."),
    ("Piano", "Can you hold it in your hand?", "No."),
    ("Elephant", "Is it bigger than a car?", "Yes."),
    ("Cat", "Is it bigger than a dog?", "No."),
    ("Horse", "Is it bigger than a person?", "Yes."),
    ("Airplane", "Is it huge?", "Yes."),
    ("Key", "Is it small?", "Yes."),
    ("Key", "Does it fit in your pocket?", "Yes."),
    # materials, colours, places, uses, parts, abilities
    ("Chair", "Is it made of wood?", "Yes."),
    ("Chair", "Is it wooden?", "Yes."),
    ("Knife", "Is it made of metal?", "Yes."),
    ("Knife", "Is it metallic?", "Yes."),
    ("Shirt", "Is it made of plastic?", "No."),
    ("Banana", "Is it yellow?", "Yes."),
    ("Banana", "Is it red in color?", "No."),
    ("Orange", "Is it orange in colour?", "Yes."),
    ("Knife", "Is it found in the kitchen?", "Yes."),
    ("Knife", "Would you find it in a bathroom?", "No."),
    ("Shark", "Does it live in the ocean?", "Yes."),
    ("Apple", "Does it grow on trees?", "Yes."),
    ("Knife", "Is it used for cutting?", "Yes."),
    ("Knife", "Do you use it to cut things?", "Yes."),
    ("Pen", "Is it used for writing?", "Yes."),
    ("Pen", "Is it used for cooking?", "No."),
    ("Car", "Does it have wheels?", "Yes."),
    ("Car", "Does it have a wheel?", "Yes."),
    ("Dog", "Does it have fur?", "Yes."),
    ("Eagle", "Can it fly?", "Yes."),
    ("Dog", "Can it fly?", "No."),
    ("Shark", "Can it swim?", "Yes."),
    ("Knife", "Is it sharp?", "Yes."),
    ("Pillow", "Is it soft?", "Yes."),
    ("Shirt", "Can you wear it?", "Yes."),
    ("Car", "Is it found outdoors?", "Yes."),
    ("Sofa", "Is it found indoors?", "Yes."),
    ("Sofa", "Is it kept inside the house?", "Yes."),
    # negation, conjunction, disjunction
    ("Car", "Is it not alive?", "Yes."),
    ("Dog", "Is it non-living?", "No."),
    ("Dog", "Isn't it alive?", "Yes."),
    ("Eagle", "Doesn't it fly?", "Yes."),
    ("Car", "Is it a vehicle with wheels?", "Yes."),
    ("Car", "Is it an animal or a vehicle?", "Yes."),
    ("Car", "Is it red or blue?", "Yes."),
    ("Car", "Is it an animal that can fly?", "No."),
    # guesses, synonyms, plurals, accents
    ("Car", "Is it a car?", "Yes."),
    ("Car", "Is it an automobile?", "Yes."),
    ("Car", "Car?", "Yes."),
    ("Car", "Is it a truck?", "No."),
    ("Airplane", "Is it a plane?", "Yes."),
    ("Airplane", "IS IT AN AEROPLANE?!", "Yes."),
    ("Shoe", "Is it a pair of shoes?", "Yes."),
    ("Scissors", "Is it a pair of scissors?", "Yes."),
    ("Television", "Is it a TV?", "Yes."),
    ("Sofa", "Is it a couch?", "Yes."),
    ("Phone", "Is it a smartphone?", "Yes."),
    ("Yo-yo", "Is it a yo-yo?", "Yes."),
    ("Cafe" if "Cafe" in NAMES else "Coconut", "Is it a coconut?", "Yes."),
    # questions it cannot map: "No." (LMRL's reading) and not understood
    ("Dog", "What colour is it?", "No."),
    ("Dog", "", "No."),
    ("Dog", "blorf zzyx?", "No."),
    ("Dog", "Is it a giraffe?", "No."),
]


@pytest.mark.parametrize(("secret", "question", "expected"), CASES)
def test_oracle_answers(secret, question, expected):
    assert answer(question, NAMES[secret]).text == expected


@pytest.mark.parametrize(
    "question", ["What colour is it?", "", "blorf zzyx?", "Is it blorfy?", "\x00\x1b[31m"]
)
def test_unmapped_questions_are_marked_not_understood(question):
    reply = answer(question, 0)
    assert reply.text == "No." and reply.understood is False and reply.detail


def test_understood_questions_are_marked_so():
    assert answer("Is it an animal?", 0).understood is True


@pytest.mark.parametrize(
    ("question", "target"),
    [
        ("Is it a car?", "Car"),
        ("Car?", "Car"),
        ("Is it a kind of car?", "Car"),
        ("Is the object a car?", "Car"),
        ("Is it a red car?", "Car"),
        ("Is it a pair of shoes?", "Shoe"),
        ("Is it a car or a truck?", None),
        ("Is it not a car?", None),
        ("Is it bigger than a car?", None),
        ("Is it found in a car?", None),
        ("Is it a car, maybe?", None),
        ("Is it an animal?", None),
    ],
)
def test_guess_detection_follows_lmrl(question, target):
    got = parse(question).target
    assert (objects()[got].name if got is not None else None) == target


def test_red_car_is_a_wrong_guess_when_the_car_is_not_red():
    car = NAMES["Car"]
    assert "red" in objects()[car].facts["color"]
    assert answer("Is it a green car?", car).text == "No."
