"""A paired episode whose two apps both stopped (both killed, the server rebooted) goes on with
the same two people, each on their side again, each in their own app: never in one app,
hot-seat (:meth:`data.session.PlaySession.resume_episode` refuses it).

* It is offered to its two people only (the episode's ``player`` and ``partner_name``, as any
  unfinished episode: :mod:`data.holds`). The first who resumes it asks to be paired again
  (:func:`ask_to_resume`: a ``pairings`` row that names the episode from the start, which the
  ordinary lobby never matches) and waits; the other, resuming it too, is paired with them.
  The old pairing of the episode, whose two apps stopped, is ended on the way.
* Each app then opens its side again (:func:`open_resumed`): the first side's app (the host,
  which records) replays the recorded steps with the other person's recorded replies, the other
  app replays the same steps as a mirror, and play goes on through the new pairing; new steps
  continue the episode's ``idx`` sequence, with ``info.by`` and ``info.partner.by`` as before.
* A person whose partner does not come back stops waiting (:func:`~data.pairing.cancel`): the
  episode stays in progress for a later try, or they mark it abandoned (:func:`abandon`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import envs
from data.holds import EpisodeHeld, hold, holder_alive, release, still_held
from data.paired_session import HostSession, MirrorSession
from data.pairing import Pairing, _row, _view, cancel_if_gone, end
from data.records import now
from data.session import PlaySession, replay_recorded, resumable_episode
from data.store import Store
from envs.players.session import ResumeError


def paired_ids(store: Store, episode_ids: Iterable[int]) -> set[int]:
    """The episodes of ``episode_ids`` that two people played together (each in their own app)."""
    ids = [int(i) for i in episode_ids]
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    rows = store.execute(
        f"SELECT DISTINCT episode_id FROM pairings WHERE episode_id IN ({marks})", ids
    ).fetchall()
    return {int(r[0]) for r in rows}


def sides(ep: Mapping[str, Any], player: str) -> tuple[str, str]:
    """(``player``'s side of the paired episode ``ep``, the other person): the episode's
    ``player`` played the first side, its ``partner_name`` the other. :class:`ResumeError` for
    anyone else."""
    roles = envs.spec(ep["task"]).roles
    if player and player == ep["player"]:
        return roles[0], ep["partner_name"] or ""
    if player and player == ep["partner_name"]:
        return roles[1], ep["player"] or ""
    raise ResumeError(f"it was played by {ep['player']} and {ep['partner_name']}, not {player}")


def ask_to_resume(store: Store, episode_id: int, player: str, holder: str) -> Pairing:
    """``player`` (in the app ``holder``) comes back to the paired episode ``episode_id``: paired
    at once with the other person if they are waiting for it, else waiting for them (poll with
    :func:`~data.pairing.pairing`; :func:`~data.pairing.cancel` gives up). Raises
    :class:`ResumeError` (not theirs, not in progress, an app of the old pairing still runs) or
    :class:`~data.holds.EpisodeHeld` (an app is playing it)."""
    with store._writing():
        ep = resumable_episode(store, episode_id)
        if not paired_ids(store, [episode_id]):
            raise ResumeError("it was not played by two people together")
        my_side, other = sides(ep, player)
        if still_held(store, episode_id):
            raise EpisodeHeld(f"episode {episode_id} is being played in another window now")
        first = envs.spec(ep["task"]).roles[0]
        rows = store.execute(
            "SELECT id, status, player, holder, partner_player, partner_holder FROM pairings "
            "WHERE episode_id = ? AND status IN ('waiting', 'paired') ORDER BY id",
            [episode_id],
        ).fetchall()
        for pid, status, a, a_holder, b, b_holder in rows:
            if status == "paired":  # the pairing the episode was played in (or resumed in)
                alive = [n for n, h in ((a, a_holder), (b, b_holder)) if h and holder_alive(h)]
                if alive:
                    raise ResumeError(f"{alive[0]}'s app is still in it (try again in a moment)")
                store.execute(
                    "UPDATE pairings SET status = 'ended', ended_at = ? WHERE id = ?", [now(), pid]
                )
        for pid, status, a, a_holder, *_ in rows:
            if status != "waiting" or a == player or a_holder == holder or a != other:
                continue  # never with oneself (a second tab of the same person)
            if cancel_if_gone(store, pid, a_holder):
                continue
            store.execute(
                """UPDATE pairings SET status = 'paired', partner_player = ?, partner_holder = ?,
                   agent_player = ?, paired_at = ? WHERE id = ?""",
                [player, holder, "second" if my_side == first else "first", now(), pid],
            )
            return _view(_row(store, pid), holder)
        asked = store.execute(  # the options the two asked for when they were first paired
            "SELECT options FROM pairings WHERE episode_id = ? ORDER BY id LIMIT 1", [episode_id]
        ).fetchone()
        cur = store.execute(
            """INSERT INTO pairings(task, options, seed, side, player, holder, campaign,
               assignment, episode_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)""",
            [
                ep["task"],
                asked[0],
                ep["seed"],
                my_side,
                player,
                holder,
                ep.get("campaign"),
                ep.get("assignment"),
                episode_id,
                now(),
            ],  # fmt: skip
        )
        pid = int(cur.lastrowid or 0)
    return _view(_row(store, pid), holder)


def open_resumed(store: Store, p: Pairing) -> PlaySession:
    """This person's side of the paired episode ``p`` resumed (``p`` paired again by
    :func:`ask_to_resume`): its recorded steps replayed, ready to go on. A replay that fails
    ends the new pairing (the other app is told) and raises :class:`ResumeError`."""
    assert p.episode_id is not None, "a resumed pairing names its episode"
    try:
        ep = resumable_episode(store, p.episode_id)
        session: HostSession | MirrorSession
        if p.records:
            session = HostSession(store, p, p.me)
        else:
            session = MirrorSession(store, p)
            session.remote.recorded = [s["action"] for s in store.steps(p.episode_id)]
        replay_recorded(session, store, ep)
    except BaseException:
        end(store, p.id, p.me)
        raise
    if session.done:  # it had ended with its last step written: over for both
        end(store, p.id, None)
    return session


def abandon(store: Store, episode_id: int, holder: str, player: str | None) -> None:
    """Mark the paired episode abandoned (its steps kept): the person who waited in vain does
    not want to go on. :class:`~data.holds.EpisodeHeld` if an app is playing it meanwhile."""
    hold(store, episode_id, holder, player)
    try:
        with store._writing():
            store.execute(
                "UPDATE pairings SET status = 'cancelled', ended_at = ? WHERE episode_id = ? "
                "AND status = 'waiting'",
                [now(), episode_id],
            )
        store.finish_episode(episode_id, status="abandoned")
    finally:
        release(store, holder, [episode_id])


def come_back_wait(store: Store, ep: Mapping[str, Any]) -> float | None:
    """How long the first to come back to the paired episode ``ep`` waits for the other before
    being asked what to do with it: its campaign assignment's ``pair_wait`` (None: no campaign,
    or none set; they wait until they stop waiting themselves)."""
    from data.campaigns import stored_campaign

    if not ep.get("campaign"):
        return None
    campaign = stored_campaign(store, ep["campaign"])
    assignment = campaign.assignment(ep["assignment"]) if campaign is not None else None
    return assignment.pair_wait if assignment is not None else None
