"""Twenty Questions: the everyday words for the kinds of things in the knowledge base.

People name a kind in many ways (``apparel``, ``a mode of transport``, ``silverware``,
``stationery``, ``a bug``); each word here stands for a kind (``kind`` facts of
``assets/objects.txt``), so ``Is it apparel?`` asks ``Is it clothing?``. The kind ``device`` is
every object that is electronic (:func:`envs.questions.twenty_questions.data.parse_objects`)."""

from __future__ import annotations

from envs.questions.text import Atom

KIND_WORDS: dict[str, tuple[str, ...]] = {
    "vehicle": ("form of transportation", "form of transport", "mode of transport",
                "mode of transportation", "means of transport", "means of transportation",
                "transportation", "way to travel", "way of getting around", "motor vehicle"),
    "clothing": ("apparel", "attire", "garment", "clothing item", "article of clothing",
                 "item of clothing", "piece of clothing", "something you wear", "wearable item"),
    "produce": ("fresh produce", "fruit or vegetable", "fruits and vegetables"),
    "vegetable": ("veggie", "veg"),
    "animal": ("creature", "beast", "critter", "living creature", "wildlife"),
    "insect": ("bug", "creepy crawly"),
    "bird": ("bird of prey", "raptor"),
    "livestock": ("farm animal", "cattle"),
    "domestic animal": ("domesticated animal", "domesticated", "tame animal"),
    "hand tool": ("manual tool", "handheld tool"),
    "power tool": ("electric tool", "powered tool"),
    "writing tool": ("writing instrument", "writing implement", "writing utensil",
                     "something to write with", "thing to write with", "drawing tool"),
    "cookware": ("pots and pans", "cooking pot", "cooking utensil", "cooking tool"),
    "tableware": ("dishware", "crockery", "dinnerware", "dishes"),
    "cutlery": ("silverware", "flatware", "eating utensil"),
    "office supply": ("stationery", "school supply", "office item", "desk item"),
    "sports equipment": ("sporting equipment", "sports gear", "sports item", "sporting goods",
                         "sports good", "sport equipment", "exercise equipment"),
    "gardening tool": ("garden tool", "yard tool", "lawn tool"),
    "art supply": ("art material", "art tool", "artist tool", "art supplies"),
    "timepiece": ("time piece",),
    "aircraft": ("flying machine",),
    "jewelry": ("jewellery", "jewel", "bling"),
    "electronic device": ("electronic gadget", "gadget", "electronic item"),
    "device": ("technology", "tech", "piece of technology", "electrical device",
               "electric device", "powered device"),
    "landform": ("land form", "geographical feature", "geographic feature", "natural feature"),
    "body of water": ("water body", "waterway"),
    "household item": ("household object", "household good", "home item", "thing in house"),
}  # fmt: skip

KIND_SYNONYMS: list[tuple[str, Atom]] = [
    (w, Atom("kind", kind)) for kind, words in KIND_WORDS.items() for w in words
]

BANK_LEAVES_OUT = frozenset({
    "aircraft", "body of water", "cookware", "device", "domestic animal", "hand tool", "landform",
    "livestock", "power tool", "produce", "seat", "tableware", "timepiece", "writing tool",
})  # fmt: skip
"""Kinds added so that the oracle understands people's words for them; the scripted askers'
question bank leaves them out, so their play (LMRL's data recipe) stays as it was."""
