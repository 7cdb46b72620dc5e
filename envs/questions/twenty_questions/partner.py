"""Twenty Questions knowledge base (``assets/objects.txt``) and embedded oracle.

The oracle maps a question to facts about the secret object and answers ``"Yes."`` or ``"No."``
(LMRL-Gym's output vocabulary):

* Words and phrases of the knowledge base (kinds, materials, colours, places, uses, parts,
  properties, abilities, the objects' names and synonyms) are found in the question in any
  inflection (``berries``, ``cutting``), with accents, case and punctuation ignored; extra
  synonyms (``living``, ``electric``, ``edible``, ``hold it in your hand`` ...) are built in.
* Sizes are against references: ``bigger than a breadbox`` (or a hand, a person, a house, or any
  object of the base), ``small``, ``huge`` ...
* Several facts are joined by *and*, or by *or* when the question says ``or``.
* ``not``/``non``/``never`` negate the question (``Is it not alive?``), except a negative opening
  (``Isn't it alive?``, ``Doesn't it fly?``), which asks the plain question.
* Naming an object is a guess (``Is it a kind of car?``, ``Car?``); naming it after a relation
  (``found in a car``, ``bigger than a car``) is not.
* Questions it cannot map (including wh-questions, which LMRL's oracle cannot answer either) get
  ``"No."`` and ``understood = False``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from envs.questions.task import OracleReply
from envs.questions.text import Atom, Lexicon, Match, canonical, clean_text, resolve, tokens

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
    *[(w, Atom("is", "alive")) for w in ("living", "living thing", "organism", "life",
                                         "living creature", "creature")],
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
    *[(w, Atom("size", ("<=", 0))) for w in ("fit in pocket", "fits in pocket", "pocket sized",
                                             "tiny", "very small", "miniature")],
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
    *[(w, Atom("is", "colorful")) for w in ("colourful", "many colors", "multicolored")],
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
    ("sport", Atom("for", "sport")), ("sports", Atom("for", "sport")),
]  # fmt: skip


@dataclass(frozen=True)
class Thing:
    """One object of the base: names, category, size and the facts per relation."""

    name: str
    variants: tuple[str, ...]
    category: str
    kinds: frozenset[str]
    size: str
    facts: dict[str, frozenset[str]]

    @property
    def rank(self) -> int:
        return SIZE_RANK[self.size]

    def n_facts(self) -> int:
        return len(self.kinds) + 1 + sum(len(v) for v in self.facts.values())


def _fields(parts: list[str]) -> dict[str, tuple[set[str], set[str]]]:
    out: dict[str, tuple[set[str], set[str]]] = {}
    for part in parts:
        if ":" not in part:
            raise ValueError(f"field without a key: {part!r}")
        key, _, vals = part.partition(":")
        pos, neg = out.setdefault(key.strip(), (set(), set()))
        for v in vals.split(","):
            v = v.strip().lower()
            if not v:
                continue
            target = neg if v.startswith("-") else pos
            v = v.lstrip("-").strip()
            c = canonical(v) if key != "size" else v
            DISPLAY.setdefault(c, v)
            target.add(c)
    return out


def parse_objects(text: str) -> list[Thing]:
    """Parse the knowledge-base format (see the header of ``objects.txt``)."""
    things: list[Thing] = []
    category = ""
    defaults: dict[str, tuple[set[str], set[str]]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            category, defaults = line.strip("[]").strip(), {}
            continue
        if line.startswith("*"):
            defaults = _fields(line[1:].split("|"))
            continue
        names, *parts = line.split("|")
        variants = tuple(v.strip() for v in names.split(";") if v.strip())
        own = _fields(parts)
        merged: dict[str, set[str]] = {}
        removed: dict[str, set[str]] = {}
        for key in {*defaults, *own}:
            dpos, dneg = defaults.get(key, (set(), set()))
            opos, oneg = own.get(key, (set(), set()))
            merged[key] = (dpos | opos) - oneg
            removed[key] = dneg | oneg
        size = next(iter(merged.pop("size", {"medium"})))
        kinds = merged.pop("kind", set())
        facts = {r: set(merged.get(r, set())) for r in RELATIONS}
        places, props = facts["in"], facts["is"]
        if "natural" not in props:
            props.add("manmade")
        if places & INDOOR:
            props.add("indoors")
        if places & OUTDOOR:
            props.add("outdoors")
        places -= {"indoor", "outdoor"}
        if SIZE_RANK[size] <= 1 and "handheld" not in removed.get("is", set()):
            props.add("handheld")
        if SIZE_RANK[size] >= 4 and "heavy" not in removed.get("is", set()):
            props.add("heavy")
        things.append(
            Thing(variants[0], variants, category, frozenset(kinds), size,
                  {r: frozenset(v) for r, v in facts.items()})
        )  # fmt: skip
    return things


@cache
def objects() -> tuple[Thing, ...]:
    text = (
        resources.files("envs.questions.twenty_questions").joinpath("assets/objects.txt").read_text("utf-8")
    )
    return tuple(parse_objects(text))


@cache
def lexicon() -> Lexicon:
    lex = Lexicon()
    things = objects()
    for i, t in enumerate(things):
        for v in t.variants:
            lex.add(v, Atom("obj", i), ing=False)
    for cat in {t.category for t in things}:
        lex.add(cat, Atom("cat", cat))
    for t in things:
        for k in t.kinds:
            lex.add(k, Atom("kind", k))
        for rel, vals in t.facts.items():
            for v in vals:
                lex.add(v, Atom(rel, v), ing=rel in ("for", "can"))
                lex.add(DISPLAY.get(v, v), Atom(rel, v), ing=rel in ("for", "can"))
    for phrase, atom in SYNONYMS:
        lex.add(phrase, atom, ing=True)
    return lex


@dataclass(frozen=True)
class Parsed:
    """A question mapped to atoms (independent of the secret, so it is cached)."""

    atoms: tuple[Atom, ...]
    any_of: bool
    negated: bool
    target: int | None
    reason: str = ""


REWRITES = {
    ("can", "you"): ("you",), ("could", "you"): ("you",), ("can", "i"): ("i",),
    ("can", "people"): ("people",), ("can", "we"): ("we",), ("grow", "on"): ("found", "on"),
    ("grows", "on"): ("found", "on"), ("grow", "in"): ("found", "in"),
    ("grows", "in"): ("found", "in"), ("live", "in"): ("found", "in"),
    ("lives", "in"): ("found", "in"),
}  # fmt: skip
"""Word pairs rewritten before matching: "can you eat it" asks about the object, not its
abilities; "grows on trees" says where it is found."""


def _rewrite(toks: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(toks):
        pair = tuple(toks[i : i + 2])
        if pair in REWRITES:
            out.extend(REWRITES[pair])  # type: ignore[index]
            i += 2
        else:
            out.append(toks[i])
            i += 1
    return out


def _size_comparison(toks: list[str]) -> tuple[Atom | None, list[str]]:
    for i, w in enumerate(toks[:-1]):
        if w in COMPARE and toks[i + 1] == "than":
            rest = toks[i + 2 :]
            for n in (2, 1):
                ref = " ".join(rest[:n])
                if len(rest) >= n and ref in REF_SIZES:
                    return Atom("size", (COMPARE[w], REF_SIZES[ref])), toks[:i] + rest[n:]
            found = lexicon().scan(rest[:4])
            for m in found:
                obj = [a for a in m.atoms if a.rel == "obj"]
                if obj and m.start == 0:
                    rank = objects()[obj[0].value].rank
                    return Atom("size", (COMPARE[w], float(rank))), toks[:i] + rest[m.end :]
            return None, toks[:i]
    return None, toks


@lru_cache(maxsize=16384)
def parse(question: str) -> Parsed:
    toks = tokens(clean_text(question))
    if not toks:
        return Parsed((), False, False, None, "empty question")
    if toks[0] in WH:
        return Parsed((), False, False, None, "not a yes/no question")
    negated = any(w in NEGATORS for w in toks[2:]) or (
        toks[0] in NEGATORS or (len(toks) > 1 and toks[1] == "non")
    )
    toks = _rewrite(toks)
    size_atom, toks = _size_comparison(toks)
    atoms: list[Atom] = [size_atom] if size_atom else []
    matches: list[Match] = lexicon().scan(toks)
    objs: list[tuple[Match, Atom]] = []
    for m in matches:
        if m.end < len(toks) and toks[m.end] == "of" and toks[m.start] in COUNTERS:
            continue  # "a piece of", "a pair of": counters, as LMRL ignores them
        atom = resolve(m.atoms, toks, m.start, m.end, TRIGGERS, PRIORITY)
        if atom.rel == "obj":
            prev = toks[m.start - 1] if m.start > 0 else ""
            if prev in RELATIONAL and not (
                prev == "of" and m.start > 1 and toks[m.start - 2] in COUNTERS
            ):
                continue  # "found in a car", "used with a pen": not a guess
            objs.append((m, atom))
        atoms.append(atom)
    any_of = "or" in toks
    target = None
    if len(objs) == 1 and not any_of and not negated and objs[0][0].end == len(toks):
        target = objs[0][1].value
    if not atoms:
        return Parsed((), False, negated, None, "no known words")
    return Parsed(tuple(atoms), any_of, negated, target)


def holds(atom: Atom, thing: Thing, index: int) -> bool:
    rel, value = atom.rel, atom.value
    if rel == "obj":
        ok = value == index
    elif rel == "cat":
        ok = thing.category == value
    elif rel == "kind":
        ok = value in thing.kinds
    elif rel == "size":
        op, ref = value
        r = thing.rank
        ok = {">": r > ref, "<": r < ref, ">=": r >= ref, "<=": r <= ref, "==": r == ref}[op]
    else:
        ok = value in thing.facts.get(rel, frozenset())
    return ok != atom.neg


def answer(question: str, secret: int) -> OracleReply:
    """The embedded oracle's reply to ``question`` about object ``secret``."""
    p = parse(question)
    if not p.atoms:
        return OracleReply("No.", False, p.reason)
    thing = objects()[secret]
    results = [holds(a, thing, secret) for a in p.atoms]
    yes = any(results) if p.any_of else all(results)
    return OracleReply("Yes." if yes != p.negated else "No.", True)
