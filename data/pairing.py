"""Two people in one episode of a two-sided task, one side each, each in their own app (two
browsers on one ``lmrl serve``, two terminals on one store): the lobby and the hand-over of
turns, both through the store, which stays the single source of truth.

* The lobby (``pairings``): a person asks to play a side (or either side) of a task with its
  options; :func:`ask_to_pair` pairs them at once with someone waiting for the other side, else
  they wait (:func:`pairing`, polled) until someone comes, or give up (:func:`cancel`).
* The person on the first side (the guesser, the seller) records the episode: their app runs
  the task and writes every step; the other app runs the same task from the same seed as a
  mirror and writes nothing but its person's replies (``pair_turns``, see
  :mod:`data.paired_session`).
* A person who leaves, or whose app stops, ends the pairing; the episode is then abandoned for
  both, with every step played kept. When both apps stop, it stays in progress, and the same two
  people can go on with it, each on their side again (:mod:`data.paired_resume`: a pairing that
  names its episode from the start, which :func:`ask_to_pair` never matches).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import envs
from data.holds import holder_alive
from data.records import dumps, now
from data.store import Store

PAIRED = "paired"
"""``--vs paired``: the other side is a person, paired through the store."""
ANY_SIDE = "any"
PAIRED_TASKS = ("twenty-questions", "guess-city", "car-dealer")
"""The tasks two people can play together: a person on each side, and any text is a move."""
POLL_S = 0.01
"""How often a waiting app looks at the store's write-ahead log (a stat; SQLite is asked only when
it changed): a turn is seen within this. 30 ms before the stat: 10 pairs' median turn 116 -> 86–121
ms at ~40 words a minute (bench/bench_serve.py), for ~0.005 of a core more per waiting app."""
CHECK_ALIVE_S = 1.0
"""How often a waiting app checks that the other person's app still runs."""


class PartnerLeft(RuntimeError):
    """The other person left the paired episode (or their app stopped): it ends for both."""


@dataclass(frozen=True)
class Pairing:
    """One person's view of a pairing: its row, and which side is theirs."""

    id: int
    task: str
    options: dict[str, Any]
    seed: int | None
    status: str
    me: str
    other: str | None
    my_holder: str
    other_holder: str | None
    my_side: str | None
    """The side I play (None while waiting for either side)."""
    episode_id: int | None
    ended_by: str | None
    campaign: tuple[str, str] | None

    @property
    def records(self) -> bool:
        """Whether my app records the episode (I play the first side)."""
        return self.my_side == envs.spec(self.task).roles[0]


def other_side(task: str, side: str) -> str:
    roles = envs.spec(task).roles
    return roles[1] if side == roles[0] else roles[0]


def check_side(task: str, side: str) -> None:
    """``side`` of ``task`` can be paired (ValueError, one line, if not)."""
    if task not in PAIRED_TASKS:
        raise ValueError(
            f"{task} cannot be played by two people together (only {', '.join(PAIRED_TASKS)})"
        )
    roles = envs.spec(task).roles
    if side != ANY_SIDE and side not in roles:
        raise ValueError(f"{task} is played as {' or '.join(roles)}, not {side!r}")


def _row(store: Store, pairing_id: int) -> dict[str, Any]:
    cur = store.execute("SELECT * FROM pairings WHERE id = ?", [pairing_id])
    names = [d[0] for d in cur.description]
    got = cur.fetchone()
    if got is None:
        raise KeyError(f"no pairing {pairing_id}")
    return dict(zip(names, got, strict=True))


def _view(row: Mapping[str, Any], holder: str) -> Pairing:
    mine = row["holder"] == holder
    me, other = (
        (row["player"], row["partner_player"]) if mine else (row["partner_player"], row["player"])
    )
    my_holder, other_holder = (
        (row["holder"], row["partner_holder"]) if mine else (row["partner_holder"], row["holder"])
    )
    my_side: str | None = None
    if row["agent_player"] is not None:
        first = envs.spec(row["task"]).roles[0]
        i_am_first = (row["agent_player"] == "first") == mine
        my_side = first if i_am_first else other_side(row["task"], first)
    elif row["side"] != ANY_SIDE and mine:
        my_side = row["side"]
    return Pairing(
        int(row["id"]),
        row["task"],
        json.loads(row["options"] or "{}"),
        row["seed"],
        row["status"],
        me,
        other,
        my_holder,
        other_holder,
        my_side,
        row["episode_id"],
        row["ended_by"],
        (row["campaign"], row["assignment"]) if row["campaign"] else None,
    )


def cancel_if_gone(store: Store, pairing_id: int, holder: str) -> bool:
    """Cancel a waiting request whose app (``holder``) no longer runs; True if it was (call it
    inside the store's write transaction)."""
    if holder_alive(holder):
        return False
    store.execute(
        "UPDATE pairings SET status = 'cancelled', ended_at = ? WHERE id = ?", [now(), pairing_id]
    )
    return True


def ask_to_pair(
    store: Store,
    task: str,
    side: str,
    player: str,
    holder: str,
    *,
    options: Mapping[str, Any] | None = None,
    seed: int | None = None,
    campaign: tuple[str, str] | None = None,
) -> Pairing:
    """Pair ``player`` (in the app ``holder``) on ``side`` of ``task`` (``any``: either) with the
    first person waiting for the other side of the same task, options and campaign assignment,
    or put them in the lobby. A waiting request whose app has stopped is cancelled on the way."""
    check_side(task, side)
    opts = dumps(dict(options or {}))
    first = envs.spec(task).roles[0]
    where_campaign = (campaign or (None, None))[0], (campaign or (None, None))[1]
    with store._writing():
        rows = store.execute(
            """SELECT id, side, holder, player FROM pairings WHERE status = 'waiting' AND task = ?
               AND options = ? AND campaign IS ? AND assignment IS ? AND episode_id IS NULL
               ORDER BY id""",
            [task, opts, *where_campaign],
        ).fetchall()
        for pid, their_side, their_holder, their_player in rows:
            if their_holder == holder or their_player == player:
                continue  # never with oneself (a second tab of the same person)
            if cancel_if_gone(store, pid, their_holder):
                continue
            if their_side != ANY_SIDE and side != ANY_SIDE and their_side == side:
                continue
            theirs = their_side if their_side != ANY_SIDE else None
            mine = side if side != ANY_SIDE else None
            they_are_first = theirs == first or (theirs is None and mine != first)
            store.execute(
                """UPDATE pairings SET status = 'paired', partner_player = ?, partner_holder = ?,
                   agent_player = ?, paired_at = ? WHERE id = ?""",
                [player, holder, "first" if they_are_first else "second", now(), pid],
            )
            return _view(_row(store, pid), holder)
        cur = store.execute(
            """INSERT INTO pairings(task, options, seed, side, player, holder, campaign,
               assignment, created_at) VALUES (?,?,?,?,?,?,?,?,?)""",
            [task, opts, seed, side, player, holder, *where_campaign, now()],
        )
        pid = int(cur.lastrowid or 0)
    return _view(_row(store, pid), holder)


def pairing(store: Store, pairing_id: int, holder: str) -> Pairing:
    """The pairing as it stands now, seen by the app ``holder``."""
    return _view(_row(store, pairing_id), holder)


def cancel(store: Store, pairing_id: int, holder: str) -> Pairing:
    """Leave the lobby (only while still waiting: a pairing made meanwhile is returned as it is)."""
    with store._writing():
        store.execute(
            "UPDATE pairings SET status = 'cancelled', ended_at = ? WHERE id = ? AND "
            "status = 'waiting' AND holder = ?",
            [now(), pairing_id, holder],
        )
    return pairing(store, pairing_id, holder)


def set_episode(store: Store, pairing_id: int, episode_id: int) -> None:
    """The recording app tells the other which episode they play."""
    with store._writing():
        store.execute("UPDATE pairings SET episode_id = ? WHERE id = ?", [episode_id, pairing_id])


def end(store: Store, pairing_id: int, by: str | None) -> None:
    """End the pairing (``by``: the person who left; None: the episode is over)."""
    with store._writing():
        store.execute(
            "UPDATE pairings SET status = 'ended', ended_by = COALESCE(ended_by, ?), "
            "ended_at = COALESCE(ended_at, ?) WHERE id = ?",
            [by, now(), pairing_id],
        )


def post_turn(
    store: Store, pairing_id: int, side: str, n: int, text: str, said: Mapping[str, Any]
) -> None:
    """Hand the other app turn ``n`` of ``side`` (``agent`` or ``partner``) (committed at once)."""
    with store._writing():
        store.execute(
            "INSERT OR REPLACE INTO pair_turns(pairing_id, side, n, text, said, created_at) "
            "VALUES (?,?,?,?,?,?)",
            [pairing_id, side, n, text, dumps(dict(said)), now()],
        )


def wait_turn(
    store: Store,
    p: Pairing,
    side: str,
    n: int,
    stopped: Callable[[], bool] = lambda: False,
) -> tuple[str, dict[str, Any]]:
    """Wait for turn ``n`` of ``side`` from the other app: (text, how it was given).
    :class:`PartnerLeft` when the pairing ends or the other app stops meanwhile; ``stopped``:
    this side gave up (raises :class:`PartnerLeft` too)."""
    checked = time.monotonic()
    wal = Path(f"{store.path}-wal")
    seen: tuple[int, int, int] | None = None
    while True:
        now_seen = _file_state(wal)
        if now_seen != seen or now_seen is None:  # a commit since the last look (or no WAL)
            seen = now_seen
            got = store.execute(
                "SELECT text, said FROM pair_turns WHERE pairing_id = ? AND side = ? AND n = ?",
                [p.id, side, n],
            ).fetchone()
            if got is not None:
                return got[0], json.loads(got[1] or "{}")
        if stopped():
            raise PartnerLeft("this side left")
        if time.monotonic() - checked > CHECK_ALIVE_S:
            seen = None  # and look at the store again, whatever the file says
            checked = time.monotonic()
            left_by = gone(store, p)
            if left_by is not None:
                raise PartnerLeft(f"{left_by} left the episode")
            if _row(store, p.id)["status"] == "ended":  # over at the other side: no more turns
                raise PartnerLeft("the episode is over")
        time.sleep(POLL_S)


def _file_state(path: Path) -> tuple[int, int, int] | None:
    """(inode, size, mtime in ns) of the store's write-ahead log: every commit of any process
    appends to it (a checkpoint restarts it), so an unchanged state means nothing new was written
    and the waiting app need not ask SQLite (a stat costs ~100× less than the query, 33 times a
    second in every waiting app). None: no such file; then the store is asked each time."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def gone(store: Store, p: Pairing) -> str | None:
    """Who left, if someone has (None also when the episode ended as it should), or the other
    person, if their app has stopped (then the pairing is ended here: the steps are kept)."""
    row = _row(store, p.id)
    if row["status"] == "ended":
        return row["ended_by"]  # None: finished, nobody left
    if p.other_holder is not None and not holder_alive(p.other_holder):
        end(store, p.id, p.other)
        return p.other or "the other person"
    return None
