"""Who may be offered an unfinished episode: its own people, and only while no other app is
playing it.

Each app process that shows an episode *holds* it (a row of ``episode_holds``: the holder's
``host:pid:token``). A hold counts while its process lives (checked through the pid on this host;
a hold written on another host counts until it is released), so an episode being played in one
window — a served browser, a terminal — is never offered to another window to resume or to mark
abandoned, whoever asks, and the episode of an app that crashed is offered again at once. The
people of an episode are the player and a person partner (:func:`episode_people`).
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from data.records import now
from data.store import Store


class EpisodeHeld(Exception):
    """The episode is being played in another window now."""


def new_holder() -> str:
    """A holder id for one app (``host:pid:token``: the token tells apart two apps of one process,
    as in tests)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def holder_alive(holder: str) -> bool:
    """Whether the process that wrote ``holder`` still runs (one on another host: assumed so)."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname():
        return True
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    except OSError:
        return False
    return True


def _live_holders(store: Store, episode_id: int) -> list[str]:
    rows = store.execute(
        "SELECT holder FROM episode_holds WHERE episode_id = ?", [episode_id]
    ).fetchall()
    return [r[0] for r in rows if holder_alive(r[0])]


def hold(store: Store, episode_id: int, holder: str, player: str | None = None) -> None:
    """Hold ``episode_id`` for ``holder``; :class:`EpisodeHeld` if another live app holds it.
    Holds of processes that ended are cleared on the way."""
    with store._writing():
        rows = store.execute(
            "SELECT holder FROM episode_holds WHERE episode_id = ?", [episode_id]
        ).fetchall()
        for (other,) in rows:
            if other == holder:
                continue
            if holder_alive(other):
                raise EpisodeHeld(f"episode {episode_id} is being played in another window now")
            store.execute(
                "DELETE FROM episode_holds WHERE episode_id = ? AND holder = ?",
                [episode_id, other],
            )
        store.execute(
            "INSERT OR REPLACE INTO episode_holds(episode_id, holder, player, held_at) "
            "VALUES (?, ?, ?, ?)",
            [episode_id, holder, player, now()],
        )


def release(store: Store, holder: str, episode_ids: Iterable[int] | None = None) -> None:
    """Let go of ``episode_ids`` (None: every episode ``holder`` holds)."""
    with store._writing():
        if episode_ids is None:
            store.execute("DELETE FROM episode_holds WHERE holder = ?", [holder])
            return
        for eid in episode_ids:
            store.execute(
                "DELETE FROM episode_holds WHERE episode_id = ? AND holder = ?", [eid, holder]
            )


def held_elsewhere(store: Store, holder: str) -> set[int]:
    """The episodes some other live app holds now."""
    rows = store.execute(
        "SELECT episode_id, holder FROM episode_holds WHERE holder != ?", [holder]
    ).fetchall()
    return {int(eid) for eid, other in rows if holder_alive(other)}


def episode_people(ep: Mapping[str, Any]) -> set[str]:
    """The people who played ``ep`` (an episode row): its player, and its partner when that
    side was a person."""
    people = {ep["player"]} if ep.get("player") else set()
    if ep.get("partner_kind") == "human" and ep.get("partner_name"):
        people.add(ep["partner_name"])
    return people


def offered_to(
    episodes: Iterable[Mapping[str, Any]],
    store: Store,
    holder: str,
    player: str | None,
    *,
    anyone: bool,
) -> list[dict[str, Any]]:
    """The unfinished ``episodes`` that may be offered to ``player`` in the app ``holder``: none
    another live app holds, and only ``player``'s own (``anyone``: a local app that knows no
    name, where every unfinished episode of the store is its person's)."""
    busy = held_elsewhere(store, holder)
    return [
        dict(e)
        for e in episodes
        if int(e["id"]) not in busy and ((anyone and player is None) or player in episode_people(e))
    ]


def still_held(store: Store, episode_id: int) -> bool:
    """Whether some live app holds ``episode_id``."""
    return bool(_live_holders(store, episode_id))
