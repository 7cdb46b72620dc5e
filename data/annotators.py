"""The people who play and label: their names, per-annotator figures, and session notes.

* :func:`player_name_error` / :func:`register_player`: a name a person chose for themselves
  (the app's name prompt), kept in ``players`` with ``meta["last_seen"]``.
* :func:`annotator_figures`: per player, over the episodes they played (``episodes.player``)
  and the labels they gave (``labels.author``): episodes, time played, success rate, mean
  return, mean think time, rejected attempts, labels (``lmrl stats --by player``, the app's
  annotators screen).
* :func:`set_session_note` / :func:`note_session`: a note a person wrote about their session,
  kept with each episode they played in it (``episodes.meta["session_note"]``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from data.records import now
from envs.core.api import clean_text

if TYPE_CHECKING:
    from data.session import PlaySession
    from data.store import Store

MAX_PLAYER_NAME = 40
"""The longest player name the name prompt takes (it shows in tables and the status line)."""
MAX_SESSION_NOTE = 500
NOTE_KEY = "session_note"


def player_name_error(name: str) -> str | None:
    """Why ``name`` cannot be a player's name (None: it can)."""
    if not name.strip():
        return "Type a name (it cannot be empty)."
    if len(name.strip()) > MAX_PLAYER_NAME:
        return f"At most {MAX_PLAYER_NAME} characters, please ({len(name.strip())} typed)."
    if any(ord(c) < 32 for c in name):
        return "A name is one line of text."
    return None


def register_player(store: Store, name: str) -> str:
    """Keep ``name`` (stripped; ValueError if :func:`player_name_error` refuses it) in ``players``
    with ``meta["last_seen"]`` set to now; returns the stored name."""
    error = player_name_error(name)
    if error:
        raise ValueError(error)
    name = clean_text(name.strip())
    with store._writing():
        store.db.execute(
            "INSERT OR IGNORE INTO players(name, kind, created_at) VALUES (?, 'human', ?)",
            [name, now()],
        )
        store.db.execute(
            """UPDATE players SET meta = json_set(CASE WHEN json_valid(meta) THEN meta ELSE '{}' END,
               '$.last_seen', ?) WHERE name = ?""",
            [now(), name],
        )
    return name


def player_meta(store: Store, name: str) -> dict[str, Any] | None:
    """The ``meta`` of player ``name`` (None if there is no such player)."""
    row = store.db.execute("SELECT meta FROM players WHERE name = ?", [name]).fetchone()
    if row is None:
        return None
    try:
        meta = json.loads(row[0])
    except (TypeError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


# -- figures -----------------------------------------------------------------------------------
FIGURES = (
    "episodes",
    "finished",
    "seconds",
    "success_rate",
    "mean_return",
    "think_ms",
    "attempts",
    "labels",
)
"""The numbers :func:`annotator_figures` gives per player, besides the name."""

_DURATION = """MAX(0, (julianday(COALESCE(e.ended_at,
        (SELECT MAX(s.created_at) FROM steps s WHERE s.episode_id = e.id), e.started_at))
    - julianday(e.started_at)) * 86400.0)"""
"""An episode's length in seconds: started to ended (one still in progress: to its last step)."""


def _json_len(column: str, path: str) -> str:
    return f"COALESCE(CASE WHEN json_valid({column}) THEN json_array_length({column}, '{path}') END, 0)"


def annotator_figures(store: Store, task: str | None = None) -> list[dict[str, Any]]:
    """Per player (by name): ``episodes`` played (any status), ``finished``, ``seconds`` played
    (the sum of their episodes' lengths), over their finished episodes ``success_rate`` and
    ``mean_return`` (None when there is none), ``think_ms``: the mean time they took per move
    (the acting side's ``steps.think_ms`` when a person acted, a person partner's
    ``info["partner"]["think_ms"]``; None if none is recorded), ``attempts``: inputs the task
    refused (``info["attempts"]`` of the steps and ``meta["attempts"]`` of the episodes), and
    ``labels``: the labels they gave (``labels.author``).

    ``task``: only that task's episodes and the labels on them. Without it every known player
    is listed, those who did nothing yet too; with it, those who did something in that task."""
    where, args = ("AND e.task = ?", [task]) if task else ("", [])
    out: dict[str, dict[str, Any]] = {}

    def row(name: str) -> dict[str, Any]:
        blank = {
            "player": name,
            **dict.fromkeys(FIGURES, 0),
            "success_rate": None,
            "mean_return": None,
            "think_ms": None,
        }
        return out.setdefault(name, blank)

    if not task:
        for (name,) in store.db.execute("SELECT name FROM players WHERE kind = 'human'").fetchall():
            row(name)
    episodes = store.db.execute(
        f"""SELECT e.player, COUNT(*), SUM(e.status = 'finished'), SUM({_DURATION}),
               AVG(CASE WHEN e.status = 'finished' THEN e.success END),
               AVG(CASE WHEN e.status = 'finished' THEN e.return END),
               SUM({_json_len("e.meta", "$.attempts")})
            FROM episodes e WHERE e.player IS NOT NULL {where} GROUP BY e.player""",
        args,
    )
    for name, n, finished, seconds, success, mean_return, attempts in episodes.fetchall():
        r = row(name)
        r.update(
            episodes=n,
            finished=finished or 0,
            seconds=seconds or 0.0,
            success_rate=success,
            mean_return=mean_return,
            attempts=attempts or 0,
        )
    steps = store.db.execute(
        f"""SELECT player, SUM(COALESCE(own, 0) + COALESCE(partner, 0)), COUNT(own) + COUNT(partner),
               SUM(attempts)
            FROM (SELECT e.player AS player,
                         CASE WHEN e.agent_kind = 'human' THEN s.think_ms END AS own,
                         CASE WHEN e.partner_kind = 'human' AND json_valid(s.info)
                              THEN json_extract(s.info, '$.partner.think_ms') END AS partner,
                         {_json_len("s.info", "$.attempts")} AS attempts
                  FROM episodes e CROSS JOIN steps s ON s.episode_id = e.id  -- people's episodes first
                  WHERE e.player IS NOT NULL {where})
            GROUP BY player""",
        args,
    )
    for name, total_ms, moves, attempts in steps.fetchall():
        r = row(name)
        r["think_ms"] = total_ms / moves if moves else None
        r["attempts"] += attempts or 0
    join = "JOIN episodes e ON e.id = l.episode_id" if task else ""
    labels = store.db.execute(
        f"""SELECT l.author, COUNT(*) FROM labels l {join}
            WHERE l.author IS NOT NULL {where} GROUP BY l.author""",
        args,
    )
    for name, n in labels.fetchall():
        row(name)["labels"] = n
    return [out[name] for name in sorted(out, key=lambda n: (n.casefold(), n))]


# -- session notes -----------------------------------------------------------------------------
def set_session_note(store: Store, episode_ids: Sequence[int], note: str | None) -> None:
    """Keep ``note`` as ``meta["session_note"]`` of the episodes ``episode_ids`` (a blank or
    None note removes it)."""
    ids = [int(i) for i in episode_ids]
    if not ids:
        return
    text = clean_text(note.strip())[:MAX_SESSION_NOTE] if note and note.strip() else None
    marks = ",".join("?" * len(ids))
    meta = "CASE WHEN json_valid(meta) THEN meta ELSE '{}' END"
    with store._writing():
        if text is None:
            store.db.execute(
                f"UPDATE episodes SET meta = json_remove({meta}, '$.{NOTE_KEY}') WHERE id IN ({marks})",
                ids,
            )
        else:
            store.db.execute(
                f"UPDATE episodes SET meta = json_set({meta}, '$.{NOTE_KEY}', ?) WHERE id IN ({marks})",
                [text, *ids],
            )


def note_session(session: PlaySession, note: str | None) -> None:
    """Keep ``note`` with the episode ``session`` records, in the store and in its recorder's
    ``meta`` (which the recorder writes again when the episode ends)."""
    if session.episode_id is None:
        return
    meta = dict(session.recorder.meta or {})
    if note and note.strip():
        meta[NOTE_KEY] = clean_text(note.strip())[:MAX_SESSION_NOTE]
    else:
        meta.pop(NOTE_KEY, None)
    session.recorder.meta = meta or None
    set_session_note(session.store, [session.episode_id], note)


def session_note(meta: Any) -> str | None:
    """The session note in an episode's decoded ``meta`` (None if it has none)."""
    note = meta.get(NOTE_KEY) if isinstance(meta, dict) else None
    return note if isinstance(note, str) and note else None
