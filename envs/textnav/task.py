"""Text-Nav: LMRL-Gym's TextWorld house as a pure-Python engine, fully (``textnav-fo``) or partially
(``textnav-po``) observed.

The house (see :mod:`envs.textnav.engine`): 8 rooms, tables in the bedroom, living room and
dining room, a closed chest in the office, a closed fridge in the kitchen, seven items. The
player starts in a room drawn by ``reset(seed)`` (or ``options={"start_room": "kitchen"}``).

Goal: put the stale food (on the living-room table) into the fridge and close the fridge: reward
**+1**, terminated, ``info["success"]``. Eating the stale food loses (reward 0, terminated).
Every other step gives 0. After ``max_steps`` (20) actions the episode is truncated.
The shortest walkthrough from the living room is ``take stale food from table``, ``go west``,
``go west``, ``open fridge``, ``insert stale food into fridge``, ``close fridge``.

Actions are TextWorld's commands: ``go <dir>``, ``take <item>`` (from the floor), ``take <item>
from <table|chest|fridge>``, ``put <item> on table``, ``insert <item> into <chest|fridge>``,
``drop <item>``, ``eat <item>``, ``open``/``close <chest|fridge>``. The canonical action text is
the command plus ``"\\n"`` (``legal_actions()``); surrounding whitespace is stripped, case and
inner spacing are forgiven. Any other text is an invalid action: reward 0, nothing changes, the
observation says so, and it counts toward the step limit.

Observations (our own wording, seeded; LMRL's layout). Each ends with the admissible commands as
LMRL appends them: ``"\\n\\nAdmissible commands: go east, go south, take stale food from
table\\n"`` (sorted, without examine/look/inventory).

* The first observation is the objective and the start room's description.
* After an action: what happened (after ``go``, the new room's description), then, in
  ``textnav-fo`` only, the inventory (``"You are carrying: a stale food."``), then the commands.
* ``textnav-fo`` room descriptions start with a sentence naming the room; ``textnav-po`` omits it
  (LMRL's ``hide_location``) and never shows the inventory.
* A winning or losing step ends with ``*** You won ... ***`` / ``*** You lost ... ***`` and no
  command list.

The model sees the whole episode (LMRL keeps the full history; at most 20 steps).
Options: ``max_steps`` (20). LMRL publishes no normalisation constants for Text-Nav.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from envs.core import EMPTY_INFO, InvalidInput, Step, TaskBase, TaskSpec, Text, TextHistory
from envs.textnav.engine import (
    CONTAINERS,
    EXITS,
    FRIDGE,
    GONE,
    HOLDER_NAMES,
    INITIAL_LOCATIONS,
    INVALID_TEXT,
    INVENTORY,
    ITEMS,
    MAP_POSITIONS,
    N_STYLES,
    OBJECTIVE,
    ROOM_INDEX,
    ROOM_TITLES,
    ROOMS,
    STALE,
    admissible,
    holder_label,
    inventory_text,
    room_block,
)
from envs.textnav.text import Unclear, go_to_room, named_room, read_command

ADMISSIBLE_PREFIX = "Admissible commands: "
WIN_TEXT = "*** You won: the stale food is in the closed fridge. ***\n"
LOSE_TEXT = "*** You lost: you ate the stale food. ***\n"

_CACHE_LIMIT = 100_000
# (room, locs, opened) -> (ops dict, canonical actions, "Admissible commands: ...\n", inventory)
_STATE_CACHE: dict[tuple, tuple[dict[str, tuple], tuple[str, ...], str, str]] = {}
# (room, style, locs, opened, fo) -> room description
_ROOM_CACHE: dict[tuple, str] = {}

_INVALID: Mapping[str, Any] = {"invalid": True}
_INVALID_TIMEOUT: Mapping[str, Any] = {"invalid": True, "success": False, "timeout": True}
_WIN: Mapping[str, Any] = {"success": True}
_LOSE: Mapping[str, Any] = {"success": False, "lost": True}
_TIMEOUT: Mapping[str, Any] = {"success": False, "timeout": True}


def _state_entry(room: int, locs: tuple[int, ...], opened: tuple[bool, bool]):
    key = (room, locs, opened)
    hit = _STATE_CACHE.get(key)
    if hit is None:
        if len(_STATE_CACHE) >= _CACHE_LIMIT:
            _STATE_CACHE.clear()
        ops = admissible(room, locs, opened)
        hit = (
            ops,
            tuple(c + "\n" for c in ops),
            ADMISSIBLE_PREFIX + ", ".join(ops) + "\n",
            inventory_text(locs),
        )
        _STATE_CACHE[key] = hit
    return hit


def _room_text(
    room: int, style: int, locs: tuple[int, ...], opened: tuple[bool, bool], fo: bool
) -> str:
    key = (room, style, locs, opened, fo)
    hit = _ROOM_CACHE.get(key)
    if hit is None:
        if len(_ROOM_CACHE) >= _CACHE_LIMIT:
            _ROOM_CACHE.clear()
        hit = _ROOM_CACHE[key] = room_block(room, style, locs, opened, fo)
    return hit


def _feedback(op: tuple, locs: tuple[int, ...]) -> str:
    kind = op[0]
    if kind == "take":
        item, src = ITEMS[op[1]], op[2]
        if src < 8:
            return f"You pick up the {item} from the floor."
        return f"You take the {item} from the {HOLDER_NAMES[src - 8]}."
    if kind == "put":
        item, dst = ITEMS[op[1]], op[2]
        prep = "into" if dst in CONTAINERS else "on"
        return f"You put the {item} {prep} the {HOLDER_NAMES[dst - 8]}."
    if kind == "drop":
        return f"You drop the {ITEMS[op[1]]} on the floor."
    if kind == "eat":
        if op[1] == STALE:
            return "You eat the stale food. It was rotten, and you feel terrible."
        return f"You eat the {ITEMS[op[1]]}. Not bad."
    name = HOLDER_NAMES[op[1] - 8]
    if kind == "open":
        inside = [ITEMS[i] for i, loc in enumerate(locs) if loc == op[1]]
        return f"You open the {name}." + (
            f" Inside you see the {' and the '.join(inside)}." if inside else " It is empty."
        )
    return f"You close the {name}."


class TextNavTask(TaskBase):
    """The house; see the module docstring for the rules and texts."""

    def __init__(self, observed: str = "fo", max_steps: int = 20) -> None:
        if observed not in ("fo", "po"):
            raise ValueError("observed must be 'fo' or 'po'")
        self.observed = observed
        self._fo = observed == "fo"
        self.max_steps = max(1, int(max_steps))
        self.spec = TaskSpec(
            id=f"textnav-{observed}",
            version=1,
            title="Text-Nav (fully observed)" if self._fo else "Text-Nav (partially observed)",
            summary=(
                "Carry the stale food to the fridge and close it; you are told where you are."
                if self._fo
                else "Carry the stale food to the fridge and close it, without being told where you are."
            ),
            max_turns=self.max_steps,
            reward_range=(0.0, 1.0),
            norm=None,
            success_return=1.0,
            help=TEXTNAV_HELP,
            options={"max_steps": self.max_steps},
            window="history",
            decoding="rerank",
        )
        self._room = 0
        self._start = 0
        self._locs: tuple[int, ...] = INITIAL_LOCATIONS
        self._opened = (False, False)
        self._styles = (0,) * len(ROOMS)
        self._t = 0
        self._done = True
        self._outcome: str | None = None
        self._visited: list[int] = []
        self._first = ""
        self._actions: list[str] = []
        self._obs: list[str] = []
        self._feedback = ""
        self._entry = _state_entry(self._room, self._locs, self._opened)

    # -- Task API --------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> str:
        rng = random.Random(seed)
        room = rng.randrange(len(ROOMS))
        self._styles = tuple(rng.randrange(N_STYLES) for _ in ROOMS)
        start = (options or {}).get("start_room")
        if start is not None:
            key = str(start).lower()
            if key not in ROOM_INDEX:
                raise ValueError(f"unknown room {start!r}; choose one of: {', '.join(ROOMS)}")
            room = ROOM_INDEX[key]
        self._room = self._start = room
        self._locs = INITIAL_LOCATIONS
        self._opened = (False, False)
        self._t = 0
        self._done = False
        self._outcome = None
        self._visited = [room]
        self._actions = []
        self._obs = []
        self._entry = _state_entry(room, self._locs, self._opened)
        self._feedback = OBJECTIVE
        block = _room_text(room, self._styles[room], self._locs, self._opened, self._fo)
        self._first = OBJECTIVE + "\n\n" + block + "\n\n" + self._entry[2]
        return self._first

    def step(self, action: str) -> Step:
        if self._done:
            raise RuntimeError("the episode is over; call reset()")
        self._t += 1
        cmd = action.strip()
        ops = self._entry[0]
        op = ops.get(cmd)
        if op is None:
            op = ops.get(" ".join(cmd.split()).lower())
        self._actions.append(cmd + "\n")
        timeout = self._t >= self.max_steps
        if op is None:
            self._feedback = INVALID_TEXT
            obs = self._compose(INVALID_TEXT)
            self._obs.append(obs)
            if timeout:
                self._done = True
                self._outcome = "timeout"
            return Step(obs, 0.0, False, timeout, _INVALID_TIMEOUT if timeout else _INVALID)
        kind = op[0]
        locs = self._locs
        if kind == "go":
            self._room = room = op[1]
            if room not in self._visited:
                self._visited.append(room)
            self._entry = _state_entry(room, locs, self._opened)
            text = _room_text(room, self._styles[room], locs, self._opened, self._fo)
        else:
            text = _feedback(op, locs)
            if kind in ("take", "put", "drop", "eat"):
                new = list(locs)
                new[op[1]] = INVENTORY if kind == "take" else GONE if kind == "eat" else op[2]
                self._locs = locs = tuple(new)
            else:
                c = CONTAINERS.index(op[1])
                opened = list(self._opened)
                opened[c] = kind == "open"
                self._opened = (opened[0], opened[1])
            self._entry = _state_entry(self._room, locs, self._opened)
        self._feedback = text
        if kind == "eat" and op[1] == STALE:
            return self._end(text + "\n\n" + LOSE_TEXT, 0.0, "lost", _LOSE)
        if kind == "close" and op[1] == FRIDGE and locs[STALE] == FRIDGE:
            return self._end(text + "\n\n" + WIN_TEXT, 1.0, "won", _WIN)
        obs = self._compose(text)
        self._obs.append(obs)
        if timeout:
            self._done = True
            self._outcome = "timeout"
            return Step(obs, 0.0, False, True, _TIMEOUT)
        return Step(obs, 0.0, False, False, EMPTY_INFO)

    def _compose(self, text: str) -> str:
        e = self._entry
        if self._fo:
            return text + "\n\n" + e[3] + "\n\n" + e[2]
        return text + "\n\n" + e[2]

    def _end(self, obs: str, reward: float, outcome: str, info: Mapping[str, Any]) -> Step:
        self._obs.append(obs)
        self._done = True
        self._outcome = outcome
        return Step(obs, reward, True, False, info)

    def history(self) -> TextHistory:
        out = [Text(self._first, False)]
        for a, o in zip(self._actions, self._obs, strict=True):
            out.append(Text(a, True))
            out.append(Text(o, False))
        return tuple(out)

    def legal_actions(self) -> list[str]:
        return list(self._entry[1])

    def parse_input(self, typed: str) -> str:
        """An admissible command, as typed or in other words (``east``, ``n``, ``grab the stale
        food``, ``put stale food in fridge``, ``go to the kitchen`` next door in the fully observed
        house: see :mod:`envs.textnav.text`); raises
        :class:`InvalidInput` with "Did you mean: ...?" when it could mean several or none."""
        if not typed.strip():
            raise InvalidInput("Type a command or pick one from the list.")
        try:
            room = (
                named_room(typed) if " ".join(typed.split()).lower() not in self._entry[0] else None
            )
            if room is not None:  # "go to the living room": by the room's name
                return (
                    go_to_room(
                        room,
                        ROOMS[self._room],
                        {d: ROOMS[r] for d, r in EXITS[self._room].items()},
                        self._fo,
                    )
                    + "\n"
                )
            return read_command(typed, self._entry[0]) + "\n"
        except Unclear as e:
            raise InvalidInput(str(e)) from None

    def completions(self, prefix: str) -> list[str]:
        """Admissible commands that start with what a person has typed so far."""
        p = " ".join(prefix.split()).lower()
        return [c for c in self._entry[0] if c.startswith(p)]

    def state(self) -> dict[str, Any]:
        locs = self._locs
        return {
            "observed": self.observed,
            "room": ROOMS[self._room],
            "room_title": ROOM_TITLES[self._room],
            "start": ROOMS[self._start],
            "visited": [ROOMS[r] for r in self._visited],
            "map": {name: list(pos) for name, pos in MAP_POSITIONS.items()},
            "links": [
                [ROOMS[a], d, ROOMS[b]]
                for a in range(len(ROOMS))
                for d, b in EXITS[a].items()
                if a < b
            ],
            "exits": {d: ROOMS[b] for d, b in EXITS[self._room].items()},
            "inventory": [ITEMS[i] for i, loc in enumerate(locs) if loc == INVENTORY],
            "items": {ITEMS[i]: holder_label(loc) for i, loc in enumerate(locs)},
            "chest_open": self._opened[0],
            "fridge_open": self._opened[1],
            "description": _room_text(
                self._room, self._styles[self._room], locs, self._opened, self._fo
            ),
            "feedback": self._feedback,
            "inventory_text": self._entry[3],
            "admissible": list(self._entry[0]),
            "steps": self._t,
            "max_steps": self.max_steps,
            "done": self._done,
            "outcome": self._outcome,
            "return": 1.0 if self._outcome == "won" else 0.0,
            "objective": OBJECTIVE,
        }

    # -- for policies ----------------------------------------------------------------------
    @property
    def room(self) -> int:
        return self._room

    @property
    def locations(self) -> tuple[int, ...]:
        return self._locs

    @property
    def opened(self) -> tuple[bool, bool]:
        """(chest open, fridge open)."""
        return self._opened

    @property
    def commands(self) -> Mapping[str, tuple]:
        """The admissible commands (without ``"\\n"``) mapped to their operations."""
        return self._entry[0]


TEXTNAV_HELP = """\
## Text-Nav

Put the **stale food** (on the table in the living room) **into the fridge** in the kitchen and
**close the fridge**: +1. Eating the stale food loses. You have 20 actions.

* Type a command in your own words (`east`, `n`, `grab the stale food`, `put stale food in
  fridge`, `shut the fridge`); **Tab** completes a command from the list. When your words could
  mean several commands you are asked which one, and it costs no turn.
* Or play a command from the list: **Up**/**Down** and **ctrl+o**, or click it.
* The map shows the rooms you have visited. In *textnav-po* you are not told which room you are
  in, nor what you carry, in the text a model sees.
"""
