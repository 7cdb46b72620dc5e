"""A recorded play session: an :class:`envs.players.session.EpisodeSession` recorded into the store
by a :class:`data.recorder.EpisodeRecorder`, every step committed as it happens (nothing played
is lost if the app dies). The game logic lives in ``envs``, the writing in the recorder; the app
and anything else that plays with people use this.

An episode left ``in_progress`` (the app died while it was played) can go on: :meth:`PlaySession.resume`
replays its recorded steps from its seed and adds the next steps to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import envs
from data.recorder import EpisodeRecorder
from data.store import Store
from envs.core import Agent
from envs.players.agents import HUMAN, MODEL_KINDS, make_agent
from envs.players.session import EpisodeSession, HumanAgent, RecordedStep, ResumeError


class PlaySession(EpisodeSession):
    """One recorded episode of ``task_id`` (``agent`` None = a human at the keyboard)."""

    def __init__(
        self,
        store: Store,
        task_id: str,
        agent: Agent | None = None,
        partner: Agent | None = None,
        player: str | None = None,
        seed: int | None = None,
        options: dict[str, Any] | None = None,
        agent_choice: str | None = None,
        strict: bool = False,
        campaign: tuple[str, str] | None = None,
    ) -> None:
        self.store = store
        self.recorder = EpisodeRecorder(store)
        self.recorder.campaign = campaign
        super().__init__(
            task_id,
            agent=agent,
            partner=partner,
            player=player,
            seed=seed,
            options=dict(options or {}),
            agent_choice=agent_choice,
            strict=strict,
            listener=self.recorder,
        )

    @property
    def campaign(self) -> tuple[str, str] | None:
        """The campaign and assignment this episode is played for (None: none)."""
        return self.recorder.campaign

    @property
    def episode_id(self) -> int | None:
        """The store's id of this episode (None until :meth:`start`)."""
        return self.recorder.episode_id

    @classmethod
    def resume_episode(cls, store: Store, episode_id: int) -> PlaySession:
        """The unfinished episode ``episode_id``, replayed to where it stopped and ready to go on
        with the sides it was recorded with (see :meth:`EpisodeSession.resume`).

        Raises :class:`~envs.players.session.ResumeError` when it cannot: it is not in progress, a
        side is a model (its replies cannot be asked again), the replay differs, or two people
        played it together (:mod:`data.paired_resume` resumes it, each on their side again)."""
        ep = resumable_episode(store, episode_id)
        if store.execute(
            "SELECT 1 FROM pairings WHERE episode_id = ? LIMIT 1", [episode_id]
        ).fetchone():  # never hot-seat: each of its two people on their side again
            raise ResumeError(
                "two people played it, each in their own app: it goes on when both come back "
                "to it, each on their side"
            )
        agent, partner = _recorded_sides(ep)
        meta = ep["meta"] if isinstance(ep["meta"], Mapping) else {}
        options = ep["options"] if isinstance(ep["options"], Mapping) else {}
        session = cls(
            store,
            ep["task"],
            agent=agent,
            partner=partner,
            player=ep["player"],
            seed=ep["seed"],
            options=dict(options),
            agent_choice=None if agent is None else ep["agent_name"],
            strict=bool(meta.get("strict")),
            campaign=(ep["campaign"], ep["assignment"]) if ep.get("campaign") else None,
        )
        replay_recorded(session, store, ep)
        return session


def resumable_episode(store: Store, episode_id: int) -> dict[str, Any]:
    """The row of ``episode_id`` if it may go on (:class:`ResumeError` says why not): in
    progress, of a task there is, at the version it was played with."""
    ep = store.episode(episode_id)
    if ep is None or ep["status"] != "in_progress":
        raise ResumeError("it is not in progress")
    if ep["task"] not in envs.ids():
        raise ResumeError(f"there is no task {ep['task']!r}")
    if ep["task_version"] != envs.spec(ep["task"]).version:
        raise ResumeError(f"it was played with version {ep['task_version']} of the task")
    return ep


def replay_recorded(session: PlaySession, store: Store, ep: Mapping[str, Any]) -> None:
    """Replay the recorded steps of the episode ``ep`` (a row) in ``session``, made with its
    sides, seed and options and not started; then it goes on recording into the same episode."""
    episode_id = int(ep["id"])
    meta = ep["meta"] if isinstance(ep["meta"], Mapping) else {}
    steps = [
        RecordedStep(
            s["action"],
            s["observation"],
            s["reward"],
            s["typed"],
            s["think_ms"],
            partner_replies(s["info"]),
        )
        for s in store.steps(episode_id)
    ]
    try:
        session.resume(ep["first_observation"], steps)
    except BaseException:
        session.task.close()
        raise
    session.recorder.episode_id = episode_id
    session.recorder.meta = dict(meta) or None
    session.recorder.restore_attempts(session)
    if session.done:  # it stopped after its last step was written: finish it now
        session.recorder.episode_ended(session, "finished")


def _recorded_sides(ep: Mapping[str, Any]) -> tuple[Agent | None, Agent | None]:
    """The agent and partner an episode was recorded with, made again (people and scripted
    policies only; the task's built-in partner is None)."""
    task_id = ep["task"]
    agent: Agent | None = None
    if ep["agent_kind"] != HUMAN:
        if ep["agent_kind"] in MODEL_KINDS:
            raise ResumeError(f"its agent is a model ({ep['agent_kind']}:{ep['agent_name']})")
        try:
            agent = make_agent(task_id, ep["agent_name"])
        except (KeyError, ValueError):
            raise ResumeError(f"there is no scripted agent {ep['agent_name']!r} any more") from None
    partner: Agent | None = None
    if ep["partner_kind"] == HUMAN:
        roles = envs.spec(task_id).roles
        partner = HumanAgent(
            ep["partner_name"] or HUMAN, role=roles[1] if len(roles) > 1 else "partner"
        )
    elif ep["partner_kind"] not in (None, "scripted"):
        raise ResumeError(f"its partner is a model ({ep['partner_kind']}:{ep['partner_name']})")
    return agent, partner


def partner_replies(info: Any) -> list[str]:
    """What the partner answered during a recorded step: the task's own record of its replies
    (``info["partner_replies"]``), else what a person partner answered (``info["partner"]``: the
    ``reply`` the task took, or what was ``typed`` when the task took it as typed)."""
    if not isinstance(info, Mapping):
        return []
    replies = info.get("partner_replies")
    if isinstance(replies, list):
        return [str(r) for r in replies]
    said = info.get("partner")
    if not isinstance(said, Mapping):
        return []
    reply = said.get("reply", said.get("typed"))
    return [reply] if isinstance(reply, str) else []
