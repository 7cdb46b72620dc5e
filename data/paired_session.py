"""The two sessions of a paired episode (:mod:`data.pairing`), one in each person's app.

* :class:`HostSession`, in the app of the person on the first side (the guesser, the seller):
  a recorded :class:`PlaySession` whose partner is the other person (:class:`RemotePartner`).
  Each move of its person is handed to the other app before the task takes it; the partner's
  replies come back through the store and are recorded with the step, as a person partner's
  always are (``info["partner"]``: what they typed or pressed, ``via``, ``think_ms``, and ``by``:
  who). Every step is committed as it is played.
* :class:`MirrorSession`, in the other person's app: the same task from the same seed, whose
  agent is the first person (:class:`RemoteAgent`: their moves read from the store) and whose
  partner is the person at this keyboard; it records nothing but their replies, handed to the
  host (:class:`PostingPartner`). Leaving ends the pairing: the host abandons the episode.

Both replay a resumed episode's recorded steps (:mod:`data.paired_resume`) without the store's
hand-over: the host's partner gives back the recorded replies, the mirror's agent the recorded
moves, and the mirror's person's recorded replies are not handed over again.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from data.pairing import Pairing, PartnerLeft, end, gone, post_turn, set_episode, wait_turn
from data.session import PlaySession
from data.store import Store
from envs.core import Task, Text
from envs.players.agents import HUMAN
from envs.players.human import HumanAgent


class RemotePartner(HumanAgent):
    """The other person, on the partner side, as the host's session sees them: each reply is
    read from the store (what they typed or pressed, how, their think time, and who)."""

    def __init__(self, store: Store, p: Pairing, role: str) -> None:
        super().__init__(p.other or HUMAN, role)
        self.store = store
        self.pairing = p
        self.replies = 0
        self._stop = threading.Event()
        self._replaying = False

    def reset(self, task: Task, seed: int | None = None) -> None:
        self.replies = 0

    def replay(self, replies: Sequence[str]) -> None:  # a resumed episode: the recorded replies
        self._replaying = True
        super().replay(replies)

    def replayed(self) -> bool:
        self._replaying = False
        return super().replayed()

    def act(self, history: Sequence[Text]) -> str:
        if self._replaying:
            return super().act(history)
        text, said = wait_turn(self.store, self.pairing, "partner", self.replies, self._stop.is_set)
        self.replies += 1
        self.last_said = {**said, "by": self.name}
        return text

    def cancel(self) -> None:
        self._stop.set()


class HostSession(PlaySession):
    """The recorded session of a paired episode, in the first side's app (module docstring)."""

    paired = True

    def __init__(self, store: Store, p: Pairing, player: str) -> None:
        import envs

        self.pairing = p
        roles = envs.spec(p.task).roles
        super().__init__(
            store,
            p.task,
            agent=None,
            partner=RemotePartner(store, p, roles[1]),
            player=player,
            seed=p.seed,
            options=dict(p.options),
            campaign=p.campaign,
        )

    def start(self) -> str:
        observation = super().start()
        assert self.episode_id is not None
        set_episode(self.store, self.pairing.id, self.episode_id)
        return observation

    def _apply(
        self,
        action: str,
        typed: str | None,
        think_ms: int | None,
        notes: Mapping[str, Any] | None = None,
    ) -> Any:
        said = {**dict(notes or {}), "typed": typed, "think_ms": think_ms, "by": self.player}
        post_turn(self.store, self.pairing.id, "agent", len(self.transitions), action, said)
        out = super()._apply(action, typed, think_ms, {**dict(notes or {}), "by": self.player})
        if self.done:
            end(self.store, self.pairing.id, None)
        return out

    def abandon(self) -> None:
        if not self.done:
            end(self.store, self.pairing.id, self.player)
        super().abandon()

    def suspend(self) -> None:  # a paired episode cannot wait for one of its people
        self.abandon()

    def partner_gone(self) -> str | None:
        """Who left, if the other person has (then the episode is ended here as abandoned)."""
        if self.done:
            return None
        who = gone(self.store, self.pairing)
        if who is not None:
            self.abandon()
        return who


class RemoteAgent:
    """The first person, on the agent side, as the mirror's session sees them: each move is read
    from the store."""

    kind = HUMAN

    def __init__(self, store: Store, p: Pairing) -> None:
        self.store = store
        self.pairing = p
        self.name = p.other or HUMAN
        self.moves = 0
        self.stop = threading.Event()
        self.recorded: list[str] = []
        """A resumed episode: the first person's recorded moves, replayed before any is read."""

    def reset(self, task: Task, seed: int | None = None) -> None:
        self.moves = 0

    def act(self, history: Sequence[Text]) -> str:
        if self.moves < len(self.recorded):
            self.moves += 1
            return self.recorded[self.moves - 1]
        text, _ = wait_turn(self.store, self.pairing, "agent", self.moves, self.stop.is_set)
        self.moves += 1
        return text


class PostingPartner(HumanAgent):
    """The person at this keyboard on the partner side: each reply is handed to the host."""

    def __init__(self, store: Store, p: Pairing, role: str) -> None:
        super().__init__(p.me or HUMAN, role)
        self.store = store
        self.pairing = p
        self.replies = 0

    def reset(self, task: Task, seed: int | None = None) -> None:
        super().reset(task, seed)
        self.replies = 0

    def act(self, history: Sequence[Text]) -> str:
        reply = super().act(history)
        said = dict(self.last_said or {})
        if said.get("via") == "replay":  # a resumed episode's recorded reply: the host has it
            return reply
        post_turn(self.store, self.pairing.id, "partner", self.replies, reply, said)
        self.replies += 1
        return reply


class MirrorRecorder:
    """The mirror's listener: writes no episode (the host does); its person leaving ends the
    pairing, and an episode whose host stopped is ended here as abandoned."""

    def __init__(self, store: Store, p: Pairing) -> None:
        self.store = store
        self.pairing = p
        self.episode_id = p.episode_id
        self.campaign = p.campaign
        self.meta: dict[str, Any] | None = None

    def episode_started(self, session: Any) -> None:
        pass

    def step_taken(self, session: Any, idx: int, outcome: Any, info: Mapping[str, Any]) -> None:
        pass

    def episode_ended(self, session: Any, status: str) -> None:
        if status != "finished":
            end(self.store, self.pairing.id, self.pairing.me)

    def restore_attempts(self, session: Any) -> None:
        pass


class MirrorSession(PlaySession):
    """The other side's session of a paired episode (module docstring)."""

    paired = True

    def __init__(self, store: Store, p: Pairing) -> None:
        import envs

        self.pairing = p
        roles = envs.spec(p.task).roles
        self.remote = RemoteAgent(store, p)
        super().__init__(
            store,
            p.task,
            agent=self.remote,
            partner=PostingPartner(store, p, roles[1]),
            player=p.me,
            seed=p.seed,
            options=dict(p.options),
            agent_choice=HUMAN,
            campaign=p.campaign,
        )
        self.recorder = MirrorRecorder(store, p)  # type: ignore[assignment]
        self.listener = self.recorder

    def abandon(self) -> None:
        self.remote.stop.set()
        super().abandon()

    def suspend(self) -> None:  # a paired episode cannot wait for one of its people
        self.abandon()

    def partner_gone(self) -> str | None:
        """Who left, if the first person has; an episode whose host app stopped is marked
        abandoned here (its steps are kept)."""
        if self.done:
            return None
        who = gone(self.store, self.pairing)
        if who is None:
            return None
        self.remote.stop.set()
        eid = self.pairing.episode_id
        if eid is not None:
            ep = self.store.episode(eid)
            if ep is not None and ep["status"] == "in_progress":
                from data.holds import still_held

                if not still_held(self.store, eid):  # the host's app is gone: end it for both
                    self.store.finish_episode(eid, status="abandoned")
        self.done = True
        return who


def open_paired(store: Store, p: Pairing, player: str) -> PlaySession:
    """The session of ``player``'s side of the paired episode ``p`` (the host's started, so the
    other app learns the episode; the mirror's once the host has started)."""
    if p.records:
        session: PlaySession = HostSession(store, p, player)
        session.start()
        return session
    if p.episode_id is None:
        raise PartnerLeft("the episode has not started yet")
    mirror = MirrorSession(store, p)
    mirror.start()
    return mirror
