"""Campaigns: a TOML file of assignments that ``lmrl serve --campaign FILE`` hands out, one after
another, to the people who arrive; the store keeps the checked file (``campaigns``) and every
episode played for it carries its ``campaign`` and ``assignment``.

A campaign file::

    name = "pilot-week"              # default: the file's name without .toml

    [[assignment]]
    id = "guess"                     # unique in the file; default: a1, a2, ...
    task = "twenty-questions"
    side = "guesser"                 # the side the person plays (default: the task's first)
    partner = "built-in"             # lmrl play's --vs (default: built-in / strong)
    options = { secret = "guitar" }  # task options
    seeds = [1, 2, 3]                # used in turn (default: random)
    episodes = 6                     # episodes wanted in all
    per_person = 3                   # at most this many per person

A person is handed the first assignment (in file order) that still wants episodes and where they
have played fewer than ``per_person``; finished and in-progress episodes count, abandoned ones
give their place back. The k-th episode of an assignment plays ``seeds[k % len(seeds)]``.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import envs
from data.pairing import ANY_SIDE, PAIRED_TASKS
from data.records import now
from data.store import Store

ASSIGNMENT_KEYS = frozenset(
    {
        "id",
        "task",
        "side",
        "partner",
        "options",
        "seeds",
        "episodes",
        "per_person",
        "pairing",
        "pair_wait",
    }
)
CAMPAIGN_KEYS = frozenset({"name", "assignment"})
DEFAULT_PAIR_WAIT = 60.0
"""Seconds a person waits to be paired before the built-in side plays (``pair_wait``)."""
COUNTED = ("finished", "in_progress")
"""The episode statuses that take a place in an assignment (abandoned ones give it back)."""


class CampaignError(ValueError):
    """A campaign file (or name) that cannot be used, in one line naming the field."""


@dataclass(frozen=True)
class Assignment:
    id: str
    task: str
    side: str
    partner: str | None
    options: dict[str, Any]
    seeds: list[int]
    episodes: int
    per_person: int
    pairing: bool = False
    """Two people play each episode, one side each (``side``: theirs, or ``any``)."""
    pair_wait: float | None = None
    """With ``pairing``: seconds to wait for the other person before the built-in side plays."""


@dataclass(frozen=True)
class Campaign:
    name: str
    assignments: list[Assignment] = field(default_factory=list)

    def assignment(self, assignment_id: str) -> Assignment | None:
        return next((a for a in self.assignments if a.id == assignment_id), None)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Campaign:
        data = json.loads(text)
        return cls(data["name"], [Assignment(**a) for a in data["assignments"]])


@dataclass(frozen=True)
class Slot:
    """The episode a person is handed: the assignment, its seed, and how far they and it are."""

    campaign: str
    assignment: Assignment
    seed: int | None
    mine: int
    """Episodes of this assignment the person has played before this one."""
    taken: int
    """Episodes of this assignment taken by everyone before this one."""


def _whole(where: str, name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise CampaignError(f"{where}.{name}: a whole number of at least {minimum}, not {value!r}")
    return value


def _text(where: str, name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CampaignError(f"{where}.{name}: a non-empty text, not {value!r}")
    return value.strip()


def _assignment(where: str, raw: Any, n: int) -> Assignment:
    if not isinstance(raw, Mapping):
        raise CampaignError(f"{where}: a table of fields ([[assignment]]), not {raw!r}")
    unknown = sorted(set(raw) - ASSIGNMENT_KEYS)
    if unknown:
        raise CampaignError(
            f"{where}.{unknown[0]}: not a field of an assignment "
            f"(fields: {', '.join(sorted(ASSIGNMENT_KEYS))})"
        )
    aid = _text(where, "id", raw.get("id", f"a{n}"))
    if "task" not in raw:
        raise CampaignError(f"{where}.task: missing (lmrl tasks lists the task ids)")
    task = _text(where, "task", raw["task"])
    if task not in envs.ids():
        raise CampaignError(f"{where}.task: no task {task!r} (lmrl tasks lists them)")
    roles = tuple(envs.spec(task).roles)
    pairing = raw.get("pairing", False)
    if not isinstance(pairing, bool):
        raise CampaignError(f"{where}.pairing: true or false, not {pairing!r}")
    side = _text(where, "side", raw.get("side", ANY_SIDE if pairing else roles[0]))
    if side not in roles and not (pairing and side == ANY_SIDE):
        either = " (or any, with pairing)" if len(roles) > 1 else ""
        raise CampaignError(
            f"{where}.side: {task} is played as {' or '.join(roles)}{either}, not {side!r}"
        )
    partner = raw.get("partner")
    if partner is not None:
        partner = _text(where, "partner", partner)
    options = raw.get("options", {})
    if not isinstance(options, Mapping):
        raise CampaignError(
            f"{where}.options: a table (options = {{ key = value }}), not {options!r}"
        )
    try:
        envs.spec(task, **dict(options))
    except (ValueError, TypeError) as e:
        raise CampaignError(f"{where}.options: {e}") from None
    seeds = raw.get("seeds", [])
    if not isinstance(seeds, list):
        raise CampaignError(f"{where}.seeds: a list of whole numbers ([1, 2, 3]), not {seeds!r}")
    for s in seeds:
        _whole(where, "seeds", s, 0)
    if "episodes" not in raw:
        raise CampaignError(f"{where}.episodes: missing (how many episodes in all)")
    episodes = _whole(where, "episodes", raw["episodes"], 1)
    per_person = _whole(where, "per_person", raw.get("per_person", episodes), 1)
    pair_wait: float | None = None
    if pairing:
        if task not in PAIRED_TASKS:
            raise CampaignError(
                f"{where}.pairing: two people can play {', '.join(PAIRED_TASKS)}, not {task}"
            )
        if partner is not None:
            raise CampaignError(f"{where}.partner: with pairing the other side is a person")
        wait = raw.get("pair_wait", DEFAULT_PAIR_WAIT)
        if isinstance(wait, bool) or not isinstance(wait, int | float) or wait < 0:
            raise CampaignError(f"{where}.pair_wait: seconds (0 or more), not {wait!r}")
        pair_wait = float(wait)
    elif "pair_wait" in raw:
        raise CampaignError(f"{where}.pair_wait: only with pairing = true")
    return Assignment(
        aid,
        task,
        side,
        partner,
        dict(options),
        list(seeds),
        episodes,
        per_person,
        pairing,
        pair_wait,
    )


def parse_campaign(data: Mapping[str, Any], default_name: str, where: str = "campaign") -> Campaign:
    """The campaign of a decoded file, checked (:class:`CampaignError` names the bad field)."""
    unknown = sorted(set(data) - CAMPAIGN_KEYS)
    if unknown:
        raise CampaignError(
            f"{where}: {unknown[0]!r} is not a campaign field (name, and [[assignment]] tables)"
        )
    name = _text(where, "name", data.get("name", default_name))
    raw = data.get("assignment")
    if not isinstance(raw, list) or not raw:
        raise CampaignError(f"{where}: no [[assignment]] tables (at least one is needed)")
    assignments = [_assignment(f"{where}: assignment[{n}]", a, n) for n, a in enumerate(raw, 1)]
    ids = [a.id for a in assignments]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise CampaignError(f"{where}: assignment id {twice[0]!r} is given twice")
    return Campaign(name, assignments)


def load_campaign(path: str | Path) -> Campaign:
    """The campaign in the TOML file ``path`` (:class:`CampaignError`: one line)."""
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise CampaignError(f"cannot read the campaign file {p} ({e.strerror or e})") from None
    except UnicodeDecodeError:
        raise CampaignError(f"{p} is not a text (UTF-8) file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CampaignError(f"{p.name}: not valid TOML ({e})") from None
    return parse_campaign(data, p.stem, p.name)


# -- the store ----------------------------------------------------------------------------------
def save_campaign(store: Store, campaign: Campaign) -> None:
    """Keep ``campaign`` in the store under its name (a later file of that name replaces it)."""
    stamp = now()
    with store._writing():
        store.execute(
            """INSERT INTO campaigns(name, spec, created_at, updated_at) VALUES (?, ?, ?, ?)
               ON CONFLICT(name) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at""",
            [campaign.name, campaign.to_json(), stamp, stamp],
        )


def stored_campaign(store: Store, name: str) -> Campaign | None:
    row = store.execute("SELECT spec FROM campaigns WHERE name = ?", [name]).fetchone()
    return Campaign.from_json(row[0]) if row else None


def campaign_names(store: Store) -> list[str]:
    return [r[0] for r in store.execute("SELECT name FROM campaigns ORDER BY created_at, name")]


def find_campaign(store: Store, file_or_name: str) -> Campaign:
    """A campaign file (checked) or the name of one the store keeps."""
    p = Path(file_or_name).expanduser()
    if p.suffix == ".toml" or p.is_file():
        return load_campaign(p)
    got = stored_campaign(store, file_or_name)
    if got is None:
        known = ", ".join(campaign_names(store)) or "none yet"
        raise CampaignError(f"no campaign {file_or_name!r} in this store (it has: {known})")
    return got


def _episodes(store: Store, campaign: str) -> list[tuple[str, str, int]]:
    """(assignment, status, episodes) of the campaign's episodes."""
    return [
        (r[0], r[1], int(r[2]))
        for r in store.execute(
            "SELECT assignment, status, COUNT(*) FROM episodes WHERE campaign = ? "
            "GROUP BY assignment, status",
            [campaign],
        )
    ]


def _counts(store: Store, campaign: str) -> list[tuple[str, str | None, str, int]]:
    """(assignment, person, status, episodes) of the campaign's episodes, per person who
    played them (both people of a paired episode)."""
    return [
        (r[0], r[1], r[2], int(r[3]))
        for r in store.execute(
            """SELECT assignment, person, status, COUNT(*) FROM (
                 SELECT assignment, player AS person, status FROM episodes WHERE campaign = ?
                 UNION ALL  -- the other person of a paired episode played it too
                 SELECT e.assignment, e.partner_name, e.status FROM episodes e
                 WHERE e.campaign = ? AND e.partner_kind = 'human'
                   AND e.id IN (SELECT episode_id FROM pairings WHERE episode_id IS NOT NULL))
               GROUP BY assignment, person, status""",
            [campaign, campaign],
        )
    ]


def next_slot(store: Store, campaign: Campaign, player: str) -> Slot | None:
    """The episode to hand ``player`` now (None: nothing left for them). Two people arriving at
    the same instant may both be handed the last place of an assignment."""
    taken: dict[str, int] = {}
    mine: dict[str, int] = {}
    for aid, status, n in _episodes(store, campaign.name):
        if status in COUNTED:
            taken[aid] = taken.get(aid, 0) + n
    for aid, who, status, n in _counts(store, campaign.name):
        if status in COUNTED and who == player:
            mine[aid] = mine.get(aid, 0) + n
    for a in campaign.assignments:
        t, m = taken.get(a.id, 0), mine.get(a.id, 0)
        if t < a.episodes and m < a.per_person:
            seed = a.seeds[t % len(a.seeds)] if a.seeds else None
            return Slot(campaign.name, a, seed, m, t)
    return None


def resumed_slot(store: Store, campaign: Campaign, episode_id: int, player: str) -> Slot | None:
    """A resumed episode's place in its assignment, as :func:`next_slot` gave it (None: not of
    this campaign, or its assignment is gone from the file)."""
    sql = "SELECT assignment, seed FROM episodes WHERE id = ? AND campaign = ?"
    row = store.execute(sql, [episode_id, campaign.name]).fetchone()
    a = next((a for a in campaign.assignments if row and a.id == row[0]), None)
    if a is None:
        return None
    marks = ",".join("?" * len(COUNTED))
    before = f"campaign = ? AND assignment = ? AND id < ? AND status IN ({marks})"
    args = [campaign.name, a.id, episode_id, *COUNTED]
    taken = store.execute(f"SELECT COUNT(*) FROM episodes WHERE {before}", args).fetchone()[0]
    mine = store.execute(
        f"SELECT COUNT(*) FROM episodes WHERE {before} AND (player = ? OR (partner_name = ? "
        "AND partner_kind = 'human'))",
        [*args, player, player],
    ).fetchone()[0]
    return Slot(campaign.name, a, row[1], int(mine), int(taken))


def campaign_progress(store: Store, campaign: Campaign) -> dict[str, Any]:
    """Where a campaign stands: per assignment the episodes wanted, finished, in progress and
    abandoned, and per person their finished and in-progress episodes against the quota."""
    rows = _counts(store, campaign.name)
    episodes = _episodes(store, campaign.name)
    out: list[dict[str, Any]] = []
    for a in campaign.assignments:
        mine = [r for r in rows if r[0] == a.id]
        by_status = {
            s: sum(n for aid, st, n in episodes if aid == a.id and st == s)
            for s in (*COUNTED, "abandoned")
        }
        people: dict[str, dict[str, int]] = {}
        for _, who, status, n in mine:
            if who is not None:
                person = people.setdefault(who, {"finished": 0, "in_progress": 0, "abandoned": 0})
                person[status] = person.get(status, 0) + n
        out.append(
            {
                "assignment": a.id,
                "task": a.task,
                "side": a.side,
                "wanted": a.episodes,
                "per_person": a.per_person,
                **by_status,
                "left": max(0, a.episodes - by_status["finished"] - by_status["in_progress"]),
                "people": people,
            }
        )
    wanted = sum(r["wanted"] for r in out)
    finished = sum(min(r["finished"], r["wanted"]) for r in out)
    return {"campaign": campaign.name, "wanted": wanted, "finished": finished, "assignments": out}


def person_line(slot: Slot) -> str:
    """What a person is told of their place in the campaign (``your 2 of 3``)."""
    a = slot.assignment
    return (
        f"campaign {slot.campaign} · {a.id}: your episode {slot.mine + 1} of {a.per_person}"
        f" · {slot.taken + 1} of {a.episodes} in all"
    )


def progress_rows(progress: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The header and rows of a campaign's progress table (``lmrl stats --campaign``, the
    annotators screen): per assignment, and who played it (finished / their quota)."""
    header = ["assignment", "task", "side", "wanted", "finished", "playing", "abandoned", "left"]
    rows = []
    for r in progress["assignments"]:
        people = ", ".join(
            f"{name} {p['finished']}/{r['per_person']}"
            + (f" (+{p['in_progress']} playing)" if p.get("in_progress") else "")
            for name, p in sorted(r["people"].items(), key=lambda kv: kv[0].casefold())
        )
        rows.append(
            [
                r["assignment"],
                r["task"],
                r["side"],
                str(r["wanted"]),
                str(r["finished"]),
                str(r["in_progress"]),
                str(r["abandoned"]),
                str(r["left"]),
                people or "-",
            ]
        )
    return [*header, "people (finished/quota)"], rows
