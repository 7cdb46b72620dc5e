"""Twenty Questions oracle vocabulary: relations, places, sizes, trigger words, and the built-in
synonyms that map everyday words to facts of the knowledge base."""

from __future__ import annotations

from envs.questions.text import Atom
from envs.questions.twenty_questions.categories import KIND_SYNONYMS

RELATIONS = ("made", "color", "in", "for", "has", "is", "can")
SIZE_RANK = {"tiny": 0, "small": 1, "medium": 3, "large": 4, "huge": 5}
INDOOR = frozenset(
    "house kitchen bedroom living room bathroom office school classroom store gym garage closet "
    "restaurant library hospital museum studio dining room workshop playroom desk bed pocket "
    "toolbox jewelry box palace hotel bar concert bowling alley".split()
) | {"living room", "dining room", "jewelry box", "bowling alley", "indoor"}
OUTDOOR = frozenset(
    "garden yard farm forest jungle ocean sea river lake park street road field sky desert "
    "mountain beach zoo stadium playground savanna pond space court snow airport station water "
    "orchard city railway ground vine hive flower tree rink ice shed wall outdoors golf course".split()
) | {"golf course", "outdoor"}
REF_SIZES = {
    "breadbox": 2.0, "bread box": 2.0, "bread bin": 2.0, "shoebox": 1.5, "shoe box": 1.5,
    "hand": 0.5, "fist": 0.5, "coin": -0.5, "person": 3.5, "human": 3.5, "man": 3.5,
    "adult": 3.5, "me": 3.5, "you": 3.5, "house": 4.5, "building": 4.5, "room": 4.5,
}  # fmt: skip
COMPARE = {
    "bigger": ">", "larger": ">", "greater": ">", "taller": ">", "heavier": ">", "longer": ">",
    "smaller": "<", "tinier": "<", "shorter": "<", "lighter": "<", "littler": "<",
}  # fmt: skip
WH = frozenset({"what", "which", "where", "who", "why", "how", "when", "whose", "whom"})
NEGATORS = frozenset({"not", "non", "never"})
RELATIONAL = frozenset(
    "than like with in on inside into from near under at by for to about as of onto".split()
)
COUNTERS = frozenset(
    {"kind", "type", "sort", "pair", "pairs", "piece", "pieces", "set", "bunch", "bar", "bars"}
)
TRIGGERS = {
    "made": frozenset({"made", "material", "materials", "consist", "consists", "built", "out"}),
    "for": frozenset({"used", "use", "for", "purpose", "useful", "uses"}),
    "in": frozenset({"in", "found", "find", "live", "lives", "located", "kept", "keep", "grow",
                     "grows", "on", "at", "inside", "near", "see"}),
    "has": frozenset({"have", "has", "with", "got", "contain", "contains"}),
    "can": frozenset({"can", "able", "could"}),
    "color": frozenset({"color", "colour", "colored", "coloured"}),
}  # fmt: skip
DISPLAY: dict[str, str] = {}
"""Canonical fact value -> its spelling in the knowledge base (for the question bank)."""
PRIORITY = ("obj", "cat", "kind", "size", "is", "color", "has", "can", "for", "in", "made")

SYNONYMS: list[tuple[str, Atom]] = [
    *[(w, Atom("is", "alive")) for w in ("living", "living thing", "organism", "life")],
    ("inanimate", Atom("is", "alive", True)), ("nonliving", Atom("is", "alive", True)),
    ("dead", Atom("is", "alive", True)),
    *[(w, Atom("is", "natural")) for w in ("nature", "naturally occurring", "found in nature")],
    *[(w, Atom("is", "manmade")) for w in ("man made", "human made", "artificial", "manufactured",
                                           "made by people", "made by humans", "invented",
                                           "machine made", "built by people", "synthetic")],
    *[(w, Atom("is", "electronic")) for w in ("electric", "electrical", "electronics",
                                              "electricity", "powered", "battery", "batteries",
                                              "plug", "plugged in", "digital", "gadget", "device",
                                              "needs power", "run on power")],
    *[(w, Atom("is", "edible")) for w in ("eat", "eaten", "eatable", "food", "consume", "consumed",
                                          "something to eat", "snack")],
    *[(w, Atom("is", "wearable")) for w in ("wear", "worn", "wearing", "put on")],
    *[(w, Atom("is", "handheld")) for w in ("hold it in hand", "hold in hand", "hold it in one hand",
                                            "fit in hand", "fits in hand", "handheld", "hand held",
                                            "held in hand", "carry it in hand", "hold it")],
    *[(w, Atom("is", "pocket sized")) for w in ("fit in pocket", "fits in pocket", "pocket sized",
                                                "pocket size", "fit in your pocket")],
    *[(w, Atom("size", ("<=", 0))) for w in ("tiny", "very small", "miniature")],
    *[(w, Atom("has", "fur")) for w in ("furry", "hairy", "fuzzy fur")],
    *[(w, Atom("is", "reflective")) for w in ("reflect", "reflects", "reflection")],
    *[(w, Atom("is", "fragile")) for w in ("break easily", "breaks easily", "easy to break")],
    *[(w, Atom("is", "electronic")) for w in ("plug into wall", "plug in wall", "plug into socket",
                                              "into wall socket", "plugs into wall")],
    *[(w, Atom("made", "stone")) for w in ("rock", "rocks", "rocky material")],
    ("tart", Atom("is", "sour")),
    *[(w, Atom("size", ("<=", 1))) for w in ("small", "little", "compact")],
    *[(w, Atom("size", (">=", 4))) for w in ("big", "large")],
    *[(w, Atom("size", (">=", 5))) for w in ("huge", "enormous", "gigantic", "giant", "massive",
                                             "very big", "very large")],
    ("medium", Atom("size", ("==", 3))), ("medium sized", Atom("size", ("==", 3))),
    *[(w, Atom("is", "indoors")) for w in ("indoors", "inside", "indoor", "inside house",
                                           "inside home")],
    *[(w, Atom("is", "outdoors")) for w in ("outdoors", "outside", "outdoor", "open air")],
    *[(w, Atom("is", "sharp")) for w in ("pointy", "pointed")],
    *[(w, Atom("is", "soft")) for w in ("squishy", "squashy")],
    *[(w, Atom("is", "expensive")) for w in ("costly", "pricey", "valuable")],
    *[(w, Atom("is", "loud")) for w in ("noisy", "make noise", "makes noise", "make sound",
                                        "makes sound", "make a sound")],
    *[(w, Atom("is", "round")) for w in ("circular", "spherical", "ball shaped")],
    *[(w, Atom("is", "fragile")) for w in ("breakable", "delicate")],
    *[(w, Atom("is", "dangerous")) for w in ("harmful", "deadly", "hurt", "hurt you")],
    *[(w, Atom("is", "colorful")) for w in ("colourful", "many colors", "multicolored",
                                            "lots of colors", "lot of colors", "many colours")],
    *[(w, Atom("is", "heavy")) for w in ("weigh a lot", "weighs a lot")],
    *[(w, Atom("for", "transport")) for w in ("transportation", "get around", "ride in",
                                              "carry people", "travel in")],
    *[(w, Atom("for", "music")) for w in ("musical", "make music", "play music")],
    *[(w, Atom("for", "playing")) for w in ("play with", "toy for")],
    ("metallic", Atom("made", "metal")), ("steel", Atom("made", "metal")),
    ("iron", Atom("made", "metal")), ("wooden", Atom("made", "wood")),
    ("timber", Atom("made", "wood")), ("cloth", Atom("made", "fabric")),
    ("textile", Atom("made", "fabric")), ("cardboard", Atom("made", "paper")),
    ("porcelain", Atom("made", "ceramic")), ("golden", Atom("made", "gold")),
    ("grey", Atom("color", "gray")),
    ("animal", Atom("kind", "animal")), ("plant", Atom("kind", "plant")),
    ("machine", Atom("kind", "machine")), ("appliance", Atom("kind", "appliance")),
    ("instrument", Atom("kind", "musical instrument")), ("toy", Atom("kind", "toy")),
    ("clothes", Atom("kind", "clothing")), ("garment", Atom("kind", "clothing")),
    ("outfit", Atom("kind", "clothing")), ("accessory", Atom("kind", "accessory")),
    ("jewellery", Atom("kind", "jewelry")), ("jewel", Atom("kind", "jewelry")),
    ("utensil", Atom("kind", "kitchen utensil")), ("gadget", Atom("kind", "electronic device")),
    ("electronic device", Atom("kind", "electronic device")),
    ("sport", Atom("for", "sport")),
    *[(w, Atom("has", "wheel")) for w in ("roll on wheels", "on wheels", "move on wheels",
                                          "go on wheels", "ride on wheels", "wheeled")],
    ("leafy green", Atom("is", "leafy")), ("leafy vegetable", Atom("is", "leafy")), ("lampshade", Atom("has", "shade")),
    ("lamp shade", Atom("has", "shade")), ("root", Atom("kind", "root vegetable")),
    *[(w, Atom("is", "spiky")) for w in ("spikes", "spike", "thorns", "thorny", "prickles")],
    *KIND_SYNONYMS, ("sports", Atom("for", "sport")),
]  # fmt: skip
