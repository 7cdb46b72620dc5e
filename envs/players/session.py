"""An episode session: one episode of a task as people and agents play it, turn by turn.

The session owns the game state (the task, who plays each side, the turn counter, the think-time
clock, the unusable inputs a person tried). It stores nothing itself: a :class:`SessionListener`
(the store's episode recorder) hears of the start, every step and the
end as they happen. No UI and no database in here.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from envs.core.api import (
    Agent,
    InvalidInput,
    Step,
    Task,
    clean_text,
    history_to_str,
    step_notes,
)
from envs.core.episode import episode_success
from envs.core.registry import make
from envs.players.agents import HUMAN, episode_source
from envs.players.human import HUMAN_VIAS, LIST, TYPED, HumanAgent, SessionClosed, how_given

__all__ = [
    "HUMAN_VIAS",
    "EpisodeSession",
    "HumanAgent",
    "RecordedStep",
    "ResumeError",
    "SessionClosed",
    "SessionListener",
    "StepOutcome",
]


class ResumeError(RuntimeError):
    """The recorded steps of an episode do not replay to what was recorded: it cannot go on."""


@dataclass
class StepOutcome:
    action: str
    step: Step
    typed: str | None
    think_ms: int | None


@dataclass
class RecordedStep:
    """A step as it was recorded, to replay it (:meth:`EpisodeSession.resume`)."""

    action: str
    observation: str
    reward: float
    typed: str | None = None
    think_ms: int | None = None
    partner_replies: Sequence[str] = ()
    """What a person playing the partner answered during the step, in order."""


class SessionListener(Protocol):
    """What hears of a session's events, in order (a recorder writes them as they happen)."""

    def episode_started(self, session: EpisodeSession) -> None: ...

    def step_taken(
        self, session: EpisodeSession, idx: int, outcome: StepOutcome, info: Mapping[str, Any]
    ) -> None:
        """Step ``idx`` was played; ``info`` is the step's info plus the session's notes (a
        person's unusable attempts, what a human partner typed)."""

    def episode_ended(self, session: EpisodeSession, status: str) -> None:
        """``status`` is ``finished``, ``abandoned`` or ``kept`` (this session plays no more of
        it, but it stays in progress to go on with later: :meth:`EpisodeSession.suspend`)."""


@dataclass
class EpisodeSession:
    """One episode of ``task_id`` with ``agent`` acting (None = a human at the keyboard)."""

    task_id: str
    agent: Agent | None = None
    partner: Agent | None = None
    player: str | None = None
    seed: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    agent_choice: str | None = None
    """How the agent was chosen (a policy name or checkpoint path), to play again with the same."""
    strict: bool = False
    """LMRL-strict mode: a human's unparsable input is sent to the task as is (and penalised)."""
    listener: SessionListener | None = None
    paired: ClassVar[bool] = False
    """One of the two sessions of an episode two people play, each in their own app."""

    task: Task = field(init=False)
    observation: str = field(init=False, default="")
    transitions: list[StepOutcome] = field(init=False, default_factory=list)
    total_return: float = field(init=False, default=0.0)
    started: bool = field(init=False, default=False)
    done: bool = field(init=False, default=False)
    success: bool | None = field(init=False, default=None)
    kept: bool = field(init=False, default=False)
    """Left unfinished to go on with later (:meth:`suspend`): still in progress in the store."""
    attempts: list[dict[str, Any]] = field(init=False, default_factory=list)
    hints: list[str] = field(init=False, default_factory=list)
    """The hints a person opened since the last step (recorded with the next one)."""
    _turn_started: float = field(init=False, default=0.0)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        make_opts = dict(self.options)
        if self.partner is not None:
            make_opts["partner"] = self.partner
        self.task = make(self.task_id, **make_opts)

    # -- lifecycle ----------------------------------------------------------------------------
    @property
    def human_acts(self) -> bool:
        return self.agent is None

    @property
    def a_person_acts(self) -> bool:
        """The acting side is a person: at this keyboard, or at another one (in a paired
        episode's mirror the agent is the other person), so nothing plays it automatically."""
        return self.agent is None or self.agent.kind == HUMAN

    @property
    def source(self) -> str:
        """``human``, ``agent`` or ``scripted`` (see :func:`envs.players.agents.episode_source`)."""
        return episode_source(
            self.agent.kind if self.agent is not None else None,
            self.partner.kind if self.partner is not None else None,
        )

    def start(self) -> str:
        """Reset the task (a random seed unless one was given); returns the first observation."""
        if self.seed is None:
            self.seed = random.SystemRandom().randrange(2**31)
        self.observation = self.task.reset(self.seed)
        if self.agent is not None:
            self.agent.reset(self.task, self.seed)
        if self.listener is not None:
            self.listener.episode_started(self)
        self.started = True
        self._turn_started = time.monotonic()
        return self.observation

    def resume(self, first_observation: str, steps: Sequence[RecordedStep]) -> None:
        """Instead of :meth:`start`: rebuild an unfinished episode by replaying its recorded
        ``steps`` from its seed, then go on playing it. The listener hears nothing of the replay
        (those steps are recorded already). A scripted agent must choose the recorded actions
        again and a person partner's recorded replies are given back in order; every step must
        reproduce its recorded observation and reward, else :class:`ResumeError` says where not."""
        if self.started:
            raise RuntimeError("the session has started already")
        if self.seed is None:
            raise ResumeError("it has no seed to replay from")
        self.observation = self.task.reset(self.seed)
        if self.observation != first_observation:
            raise ResumeError("its first observation is not the one recorded")
        if self.agent is not None:
            self.agent.reset(self.task, self.seed)
        self.started = True
        for n, rec in enumerate(steps, 1):
            if self.done:
                raise ResumeError(f"it ended before step {n}")
            if self.agent is not None and clean_text(self.agent_action()) != rec.action:
                raise ResumeError(f"the agent chooses another action at step {n}")
            st = self._replay_step(n, rec)
            if (st.observation, st.reward) != (rec.observation, rec.reward):
                raise ResumeError(f"step {n} does not replay as recorded")
            self.transitions.append(StepOutcome(rec.action, st, rec.typed, rec.think_ms))
            self.total_return += st.reward
            self.observation = st.observation
            if st.terminated or st.truncated:
                self.done = True
                self.success = episode_success(self.task.spec, st.info, self.total_return)
        self._turn_started = time.monotonic()

    def _replay_step(self, n: int, rec: RecordedStep) -> Step:
        partner = self.partner
        if not isinstance(partner, HumanAgent):
            return self.task.step(rec.action)
        partner.replay(rec.partner_replies)
        try:
            st = self.task.step(rec.action)
        except SessionClosed:
            raise ResumeError(
                f"step {n} needs more replies from the partner than were recorded"
            ) from None
        if not partner.replayed():
            raise ResumeError(f"step {n} needs fewer replies from the partner than were recorded")
        return st

    def state(self) -> dict[str, Any]:
        return self.task.state()

    def model_text(self) -> str:
        """What the agent's model reads now: a chat model's messages (its ``model_view``), else
        LMRL's text history."""
        view = getattr(self.agent, "model_view", None)
        text = view(self.task.history()) if view is not None else None
        return text if text is not None else history_to_str(self.task.history())

    # -- acting -------------------------------------------------------------------------------
    def note_hint(self, name: str) -> None:
        """A person looked at a hint (``"legal_moves"``, ``"wordle_hint"``) before their next step:
        that step records it in ``info["hints"]``, so a dataset can tell assisted steps."""
        if name not in self.hints:
            self.hints.append(name)

    def human_input(
        self, typed: str, *, chosen: bool = False, via: str = TYPED, pressed: str | None = None
    ) -> StepOutcome | None:
        """Apply what the human typed; raises InvalidInput (recorded as an attempt) if unusable.

        ``via`` says how the person gave it (recorded as ``info["via"]``): ``typed`` (the step keeps
        ``typed`` as typed), or ``key`` / ``button`` with ``pressed`` the key's name or the button's
        label, or ``list`` (``chosen``: picked from a list of the task's commands); nothing was
        typed then, so the step records ``typed`` None."""
        think_ms = int((time.monotonic() - self._turn_started) * 1000)
        typed = clean_text(typed)
        via = LIST if chosen else via
        if via != TYPED:
            action = self.task.parse_input(typed)
            return self._apply(
                action, typed=None, think_ms=think_ms, notes=how_given(via, pressed, typed)
            )
        try:
            action = self.task.parse_input(typed)
        except InvalidInput as e:
            if not self.strict:
                self.attempts.append({"typed": typed[:500], "error": str(e), "think_ms": think_ms})
                raise
            action = typed if typed.endswith("\n") else typed + "\n"
        return self._apply(action, typed=typed, think_ms=think_ms, notes={"via": TYPED})

    def takeover_input(
        self,
        typed: str,
        proposed: str,
        player: str | None,
        *,
        chosen: bool = False,
        via: str = TYPED,
        pressed: str | None = None,
    ) -> StepOutcome:
        """A person plays the agent's turn while watching it (a correction of the agent, DAgger
        style): the step's info records ``takeover``, what the agent would have played
        (``agent_proposed``, asked for before this call) and who took over (``player``), and how
        the move was given (``via``, as in :meth:`human_input`).
        Raises InvalidInput (recorded as an attempt) like :meth:`human_input`."""
        think_ms = int((time.monotonic() - self._turn_started) * 1000)
        typed = clean_text(typed)
        via = LIST if chosen else via
        notes: dict[str, Any] = {
            "takeover": True,
            "agent_proposed": clean_text(proposed),
            "player": player,
        }
        try:
            action = self.task.parse_input(typed)
        except InvalidInput as e:
            self.attempts.append({"typed": typed[:500], "error": str(e), "think_ms": think_ms})
            raise
        notes.update(how_given(via, pressed, typed))
        return self._apply(
            action, typed=typed if via == TYPED else None, think_ms=think_ms, notes=notes
        )

    def agent_action(self) -> str:
        """Ask the agent for its next action (may be slow: call from a worker thread)."""
        assert self.agent is not None
        return self.agent.act(self.task.history())

    def agent_step(self, action: str | None = None, think_ms: int | None = None) -> StepOutcome:
        """Ask the agent and play its action; or play ``action`` it chose already (asked for with
        :meth:`agent_action`, e.g. by a worker that may be cancelled in between) taking ``think_ms``."""
        if action is None:
            started = time.monotonic()
            action = self.agent_action()
            think_ms = int((time.monotonic() - started) * 1000)
        return self._apply(
            clean_text(action), typed=None, think_ms=think_ms, notes=step_notes(self.agent)
        )

    def _apply(
        self,
        action: str,
        typed: str | None,
        think_ms: int | None,
        notes: Mapping[str, Any] | None = None,
    ) -> StepOutcome:
        with self._lock:
            if self.done:
                raise RuntimeError("the episode is over")
            assert self.started, "start() the session first"
            st = self.task.step(action)
            info = dict(st.info)
            info.update(notes or {})
            if self.attempts:
                info["attempts"] = self.attempts
                self.attempts = []
            if self.hints:
                info["hints"] = self.hints
                self.hints = []
            partner = self.partner
            if isinstance(partner, HumanAgent) and partner.last_said is not None:
                info["partner"] = partner.last_said
                partner.last_said = None
            out = StepOutcome(action, st, typed, think_ms)
            if self.listener is not None:  # before the state moves on: a failed write stops here
                self.listener.step_taken(self, len(self.transitions), out, info)
            self.transitions.append(out)
            self.total_return += st.reward
            self.observation = st.observation
            if st.terminated or st.truncated:
                self.done = True
                self.success = episode_success(self.task.spec, st.info, self.total_return)
                if self.listener is not None:
                    self.listener.episode_ended(self, "finished")
                self._close_task()
            self._turn_started = time.monotonic()
            return out

    def suspend(self) -> None:
        """Leave an unfinished episode to go on with later: it stays in progress (its steps are
        recorded; :meth:`resume` replays them in a new session), and this session plays no more.
        The listener hears ``kept``, with the unusable inputs tried since the last step still in
        :attr:`attempts` (a recorder keeps them for the turn the resumed session goes on with)."""
        if isinstance(self.partner, HumanAgent):
            self.partner.cancel()
        if self.started and not self.done:
            self.kept = True
            self.done = True
            if self.listener is not None:
                self.listener.episode_ended(self, "kept")
            self.attempts = []
        self._close_task()

    def abandon(self) -> None:
        """Leave an unfinished episode: it is kept, marked abandoned, never mixed into datasets.
        The unusable inputs tried since the last step stay in :attr:`attempts` for the listener
        to record with the episode."""
        if isinstance(self.partner, HumanAgent):
            self.partner.cancel()
        if self.started and not self.done:
            if self.listener is not None:
                self.listener.episode_ended(self, "abandoned")
            self.done = True
        self._close_task()

    def _close_task(self) -> None:
        self.task.close()
