"""What people do with the Twenty Questions objects and what the objects do
(``assets/actions.txt``): verb phrases such as ``wear on your feet``, ``keep food cold`` or
``give light``, each with every object it is true of (closed world)."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources

from envs.questions.phrases import Phrase, make_phrase, ordered
from envs.questions.text import tokens


def parse_actions(text: str, names: dict[str, int], categories: dict[str, list[int]]) -> tuple[
    list[Phrase], dict[str, frozenset[int]]
]:
    """Phrases (longest first) and, per fact, the indices of the objects it is true of."""
    phrases: list[Phrase] = []
    holders: dict[str, frozenset[int]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        said, _, who = line.partition("|")
        spellings = [s.strip() for s in said.split(";") if s.strip()]
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


def actions(things: Sequence[object]) -> tuple[list[Phrase], dict[str, frozenset[int]]]:
    names = {t.name.lower(): i for i, t in enumerate(things)}  # type: ignore[attr-defined]
    cats: dict[str, list[int]] = {}
    for i, t in enumerate(things):
        cats.setdefault(t.category, []).append(i)  # type: ignore[attr-defined]
    text = (
        resources.files("envs.questions.twenty_questions")
        .joinpath("assets/actions.txt")
        .read_text("utf-8")
    )
    return parse_actions(text, names, cats)
