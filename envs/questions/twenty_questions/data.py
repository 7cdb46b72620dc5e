"""Twenty Questions knowledge base: the objects (``assets/objects.txt``: names, category, size,
facts per relation) and what people do with them and what they do (``assets/actions.txt``: verb
phrases such as ``wear on your feet``, ``keep food cold`` or ``give light``, each with every
object it is true of; closed world)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from envs.questions.text import canonical, tokens
from envs.questions.text.phrases import Phrase, make_phrase, ordered
from envs.questions.twenty_questions.text import DISPLAY, INDOOR, OUTDOOR, RELATIONS, SIZE_RANK


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
        if "electronic" in props:
            kinds.add("device")  # "Is it a device?": anything that runs on electricity
        if SIZE_RANK[size] == 0 and "pocket sized" not in removed.get("is", set()):
            props.add("pocket sized")
        if SIZE_RANK[size] <= 1 and "handheld" not in removed.get("is", set()):
            props.add("handheld")
        if SIZE_RANK[size] <= 3 and "liftable" not in removed.get("is", set()):
            props.add("liftable")  # "Can you pick it up?": a person can lift it
        if SIZE_RANK[size] >= 4 and "heavy" not in removed.get("is", set()):
            props.add("heavy")
        things.append(
            Thing(
                variants[0],
                variants,
                category,
                frozenset(kinds),
                size,
                {r: frozenset(v) for r, v in facts.items()},
            )
        )
    return things


@cache
def objects() -> tuple[Thing, ...]:
    text = (
        resources.files("envs.questions.twenty_questions")
        .joinpath("assets/objects.txt")
        .read_text("utf-8")
    )
    return tuple(parse_objects(text))


PARTS: set[tuple[str, ...]] = set()
"""Action spellings marked ``!`` in ``actions.txt``: nouns that name a part, a stage or a related
thing (``caterpillar``, ``engine``), so that ``Is it a caterpillar?`` asks what the object is."""


def parse_actions(
    text: str, names: dict[str, int], categories: dict[str, list[int]]
) -> tuple[list[Phrase], dict[str, frozenset[int]]]:
    """Phrases (longest first) and, per fact, the indices of the objects it is true of."""
    phrases: list[Phrase] = []
    holders: dict[str, frozenset[int]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        said, _, who = line.partition("|")
        spellings = [s.strip() for s in said.split(";") if s.strip()]
        for s in spellings:
            if s.startswith("!"):  # a thing, not a kind: "Is it a caterpillar?" is a wrong guess
                PARTS.add(tuple(tokens(s[1:])))
        spellings = [s.lstrip("!").strip() for s in spellings]
        value = spellings[0]
        objs: set[int] = set()
        for item in (w.strip() for w in who.split(",")):
            if not item:
                continue
            if item.startswith("@"):
                objs.update(categories[item[1:].strip()])
            elif item.startswith("-"):
                objs.discard(names[item[1:].strip().lower()])
            else:
                if item.lower() not in names:
                    raise ValueError(f"actions.txt: unknown object {item!r}")
                objs.add(names[item.lower()])
        holders[value] = frozenset(objs)
        for s in spellings:
            ph = make_phrase(s, value, tokens)
            if ph is not None:
                phrases.append(ph)
    return ordered(phrases), holders


def read_actions(things: Sequence[Thing]) -> tuple[list[Phrase], dict[str, frozenset[int]]]:
    names = {t.name.lower(): i for i, t in enumerate(things)}
    cats: dict[str, list[int]] = {}
    for i, t in enumerate(things):
        cats.setdefault(t.category, []).append(i)
    text = (
        resources.files("envs.questions.twenty_questions")
        .joinpath("assets/actions.txt")
        .read_text("utf-8")
    )
    return parse_actions(text, names, cats)
