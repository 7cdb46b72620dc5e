"""What a person types in Text-Nav, read as one of the admissible commands.

People write ``east``, ``n``, ``walk north``, ``grab the stale food``, ``pick up the bowl``,
``put stale food in fridge``, ``shut the fridge``; the task's commands are TextWorld's
(``go east``, ``take stale food from table``, ``insert stale food into fridge``,
``close fridge``). :func:`read_command` turns the first into the second, or says what the person
may have meant (:class:`Unclear`).

The reading is by meaning, not by wording: the typed text gives a verb, maybe an item and maybe
a place, and the admissible commands whose operation (``("take", item, holder)``,
``("put", item, holder)`` ...) fits all three are the candidates. Exactly one: that command.
Several, or none but close ones: :class:`Unclear` with them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from envs.textnav.engine import HOLDER_NAMES, ROOMS

DIRECTIONS = {
    "n": "north",
    "s": "south",
    "e": "east",
    "w": "west",
    "north": "north",
    "south": "south",
    "east": "east",
    "west": "west",
}
_DROPPED = {"a", "an", "the", "some", "my", "your", "please", "to", "then", "and", "now", "it"}
# The first word(s) of what was typed -> the kind of operation (see engine.admissible).
_VERBS: dict[tuple[str, ...], str] = {
    ("go",): "go",
    ("walk",): "go",
    ("move",): "go",
    ("head",): "go",
    ("run",): "go",
    ("take",): "take",
    ("get",): "take",
    ("grab",): "take",
    ("pick", "up"): "take",
    ("pick",): "take",
    ("fetch",): "take",
    ("collect",): "take",
    ("put",): "put",
    ("place",): "put",
    ("insert",): "put",
    ("set",): "put",
    ("store",): "put",
    ("drop",): "drop",
    ("discard",): "drop",
    ("eat",): "eat",
    ("consume",): "eat",
    ("open",): "open",
    ("close",): "close",
    ("shut",): "close",
}
_ITEM_ALIASES = {
    "stale food": 0,
    "rotten food": 0,
    "old food": 0,
    "stale": 0,
    "fresh food": 1,
    "fresh": 1,
    "bowl": 2,
    "coffee cup": 3,
    "cup": 3,
    "mug": 3,
    "coffee": 3,
    "plate": 4,
    "utensils": 5,
    "utensil": 5,
    "cutlery": 5,
    "fruit": 6,
}
_AMBIGUOUS_ITEMS = {"food": (0, 1)}
_PLACES = {
    "table": "table",
    "chest": "chest",
    "fridge": "fridge",
    "refrigerator": "fridge",
    "floor": "floor",
    "ground": "floor",
}
_INTO = {"in", "into", "inside", "on", "onto", "from", "off", "out", "of", "in to"}


class Unclear(ValueError):
    """The text could mean any of ``candidates`` (admissible commands), or is near them."""

    def __init__(self, message: str, candidates: list[str]) -> None:
        super().__init__(message)
        self.candidates = candidates


def _words(typed: str) -> list[str]:
    text = re.sub(r"[^a-z ]+", " ", typed.lower().replace("'", ""))
    return [w for w in text.split() if w not in _DROPPED]


def _op_item(op: tuple) -> int | None:
    return op[1] if op[0] in ("take", "put", "drop", "eat") else None


def _op_place(op: tuple) -> str | None:
    """The holder an operation names (``table``, ``chest``, ``fridge``) or ``floor``."""
    if op[0] == "take" or op[0] == "put":
        return "floor" if op[2] < 8 else HOLDER_NAMES[op[2] - 8]
    if op[0] in ("open", "close"):
        return HOLDER_NAMES[op[1] - 8]
    return None


def _find_items(words: list[str]) -> set[int]:
    text = " ".join(words)
    found: set[int] = set()
    for alias, item in sorted(_ITEM_ALIASES.items(), key=lambda kv: -len(kv[0])):
        if re.search(rf"\b{alias}\b", text):
            found.add(item)
            text = re.sub(rf"\b{alias}\b", " ", text)
    for word, items in _AMBIGUOUS_ITEMS.items():
        if re.search(rf"\b{word}\b", text):
            found.update(items)
    return found


def _parse(words: list[str]) -> tuple[str | None, set[int], str | None]:
    """(kind, items, place) read from the words; a lone direction is ``go``."""
    if not words:
        return None, set(), None
    if len(words) == 1 and words[0] in DIRECTIONS:
        return "go", set(), DIRECTIONS[words[0]]
    kind = None
    for n in (2, 1):
        verb = _VERBS.get(tuple(words[:n]))
        if verb is not None:
            kind, words = verb, words[n:]
            break
    if kind is None:
        return None, _find_items(words), None
    if kind == "take" and words and words[-1] == "up":  # "pick the bowl up"
        words = words[:-1]
    if kind == "go":
        dirs = [DIRECTIONS[w] for w in words if w in DIRECTIONS]
        return kind, set(), dirs[0] if len(dirs) == 1 else None
    place = next((_PLACES[w] for w in words if w in _PLACES), None)
    if kind == "drop" and place not in (None, "floor") and any(w in _INTO for w in words):
        kind = "put"  # "drop the food in the fridge"
    if kind == "put" and place == "floor":
        kind, place = "drop", None
    return kind, _find_items(words), place


def read_command(typed: str, ops: Mapping[str, tuple]) -> str:
    """The admissible command (without ``"\\n"``) that ``typed`` means; raises :class:`Unclear`
    with the candidates when it means several or none of them (``ops``: command -> operation)."""
    cmd = " ".join(typed.split()).lower()
    if cmd in ops:
        return cmd
    words = _words(cmd)
    kind, items, place = _parse(words)
    if kind == "go" and place is not None:
        if f"go {place}" in ops:
            return f"go {place}"
        raise Unclear(
            f"There is no way {place} from here.", [c for c in ops if c.startswith("go ")]
        )
    candidates = []
    if kind is not None:
        for command, op in ops.items():
            if op[0] != kind:
                continue
            if items and _op_item(op) not in items:
                continue
            if place is not None and _op_place(op) not in (place, None):
                continue
            candidates.append(command)
    if kind is None and items:  # only an item was named: whatever can be done with it
        candidates = [c for c, op in ops.items() if _op_item(op) in items]
    if len(candidates) == 1 and (kind is not None and (items or kind in ("open", "close", "go"))):
        return candidates[0]
    prefixed = [c for c in ops if c.startswith(cmd)] if cmd else []
    if len(prefixed) == 1:
        return prefixed[0]
    if not candidates:
        candidates = prefixed or _near(ops, items, place)
    if not candidates and kind is None:
        candidates = difflib.get_close_matches(cmd, list(ops), n=4, cutoff=0.6)
    if candidates:
        raise Unclear(f"Did you mean: {', '.join(candidates[:6])}?", candidates[:6])
    raise Unclear(f"You can't do {cmd[:40]!r} here; pick one of the listed commands.", [])


def _near(ops: Mapping[str, tuple], items: set[int], place: str | None) -> list[str]:
    """Commands about the same place first (``open fridge`` for ``put X in fridge`` while it is
    closed), then about the same items."""
    out = [c for c, op in ops.items() if place is not None and _op_place(op) == place]
    out += [c for c, op in ops.items() if items and _op_item(op) in items and c not in out]
    return out


_TO_A_ROOM = re.compile(
    r"^(?:(?:please|let'?s|i'?ll|i want to)\s+)?(?:(?:go|walk|move|head|run|step|enter|return)\s+)?"
    r"(?:(?:back\s+)?(?:to|into|in|towards?)\s+)?(?:the\s+)?(?P<room>[a-z ]+?)\s*[.!]*$"
)


def named_room(typed: str) -> str | None:
    """The room ``typed`` asks to go to by its name (``go to the living room``, ``kitchen``,
    ``enter the office``), or None when it names no room that way."""
    m = _TO_A_ROOM.match(" ".join(typed.lower().split()))
    if m is None:
        return None
    room = m.group("room").strip()
    room = {"living": "living room", "dining": "dining room", "lounge": "living room"}.get(
        room, room
    )
    return room if room in ROOMS else None


def go_to_room(room: str, here: str, exits: Mapping[str, str], fully_observed: bool) -> str:
    """The command that walks into ``room`` from here (``exits``: direction -> room); raises
    :class:`Unclear` when it is not next door, or when the house is partially observed (its text
    names no room, so neither does a person's command)."""
    ways = [f"go {d}" for d in exits]
    if not fully_observed:
        raise Unclear(
            "In the partially observed house the rooms have no names: move by direction "
            f"({', '.join(ways)}).",
            ways,
        )
    if room == here:
        raise Unclear(f"You are in the {room} already; from here you can {', '.join(ways)}.", ways)
    for direction, there in exits.items():
        if there == room:
            return f"go {direction}"
    raise Unclear(
        f"The {room} is not next to this room; from here you can {', '.join(ways)}.", ways
    )
