"""Recording episodes into the store: the only writer of episodes and their steps.

* :class:`EpisodeRecorder` listens to an :class:`envs.players.session.EpisodeSession` and writes
  each event as it happens: the start, every step (committed at once, so nothing a person played
  is lost on a crash), and the end (finished or abandoned).
* :class:`BatchRecorder` buffers finished :class:`~data.records.EpisodeRecord` s and writes them
  ``batch`` at a time, each batch in one transaction (bulk generation, online rollouts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from data.records import EpisodeRecord, agent_identity, partner_identity

if TYPE_CHECKING:
    from data.store import Store
    from envs.players.session import EpisodeSession, StepOutcome


def _jsonable(v: Any) -> bool:
    return isinstance(v, str | int | float | bool | type(None) | list | tuple | dict)


def stored_options(task: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """The options an episode is stored with: what was given, and every option the task was built
    with, defaults included, as the task took them (its ``spec.options``: ``setups=kRK`` is stored
    as ``["kRK"]``); ``make(task_id, **options)`` with them plays the same game from the same seed."""
    opts = {**dict(given), **dict(getattr(task.spec, "options", None) or {})}
    return {
        k: list(v) if isinstance(v, tuple) else v
        for k, v in opts.items()
        if k != "partner" and _jsonable(v)
    }


class EpisodeRecorder:
    """Writes one interactive episode to ``store`` as it is played (a session listener)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.episode_id: int | None = None
        self.meta: dict[str, Any] | None = None
        """The episode's ``meta`` as written (kept to add to it when the episode ends)."""
        self.campaign: tuple[str, str] | None = None
        """The campaign and assignment the episode is played for (written with its start)."""
        self.takeover_steps = 0
        """Steps a person played for the agent (``info["takeover"]``): marked in ``meta`` at the end."""

    def episode_started(self, session: EpisodeSession) -> None:
        """Insert the ``in_progress`` episode (committed) with its sides and first observation."""
        spec = session.task.spec
        self.meta = {"strict": session.strict} if session.agent is None else None
        self.episode_id = self.store.start_episode(
            spec.id,
            spec.version,
            session.seed,
            session.observation,
            agent_identity(session.agent),
            partner=partner_identity(session.partner, spec),
            player=session.player,
            source=session.source,
            options=stored_options(session.task, session.options),
            meta=self.meta,
            campaign=self.campaign,
        )

    def step_taken(
        self, session: EpisodeSession, idx: int, outcome: StepOutcome, info: Mapping[str, Any]
    ) -> None:
        """Record step ``idx`` and commit it at once."""
        assert self.episode_id is not None, "the episode was not started"
        st = outcome.step
        if info.get("takeover"):
            self.takeover_steps += 1
        self.store.add_step(
            self.episode_id,
            idx,
            outcome.action,
            st.observation,
            st.reward,
            st.terminated,
            st.truncated,
            info,
            typed=outcome.typed,
            think_ms=outcome.think_ms,
        )
        if self.meta and "attempts" in self.meta and "attempts" in info:  # restored: now the step's
            self.meta = {k: v for k, v in self.meta.items() if k != "attempts"} or None
            self.store.set_episode_meta(self.episode_id, self.meta)

    def restore_attempts(self, session: EpisodeSession) -> None:
        """A resumed episode: the unusable inputs tried before it was kept go back to the turn
        they were tried in (the next step's ``info["attempts"]``, as if never left)."""
        kept = (self.meta or {}).get("attempts")
        if isinstance(kept, list) and kept and not session.done:
            session.attempts = [a for a in kept if isinstance(a, dict)] + session.attempts

    def episode_ended(self, session: EpisodeSession, status: str) -> None:
        """Close the episode: ``finished`` (with the session's success) or ``abandoned``; the
        unusable inputs a person tried after the last step are kept in the episode's
        ``meta["attempts"]`` (they belong to no step). ``kept``: it stays in progress, with those
        inputs in ``meta["attempts"]`` until the resumed session's next step takes them
        (:meth:`restore_attempts`)."""
        assert self.episode_id is not None, "the episode was not started"
        if status == "kept":
            if session.attempts:
                self.meta = {**(self.meta or {}), "attempts": list(session.attempts)}
                self.store.set_episode_meta(self.episode_id, self.meta)
            return
        meta = None
        if session.attempts:
            meta = {**(self.meta or {}), "attempts": list(session.attempts)}
            session.attempts = []
        if self.takeover_steps:  # a person corrected the agent: datasets can select these
            meta = {
                **(meta or self.meta or {}),
                "takeover": True,
                "takeover_steps": self.takeover_steps,
            }
        if status == "finished":
            self.store.finish_episode(self.episode_id, success=session.success, meta=meta)
        else:
            self.store.finish_episode(self.episode_id, status=status, meta=meta)


class BatchRecorder:
    """Buffers finished episodes and writes them ``batch`` at a time, one transaction each.

    Use it as a context manager, or call :meth:`flush` at the end: what is still buffered when
    the block fails is not written (a batch is all or nothing).
    """

    def __init__(self, store: Store, batch: int = 200) -> None:
        if batch < 1:
            raise ValueError("batch must be at least 1")
        self.store = store
        self.batch = batch
        self.written = 0
        self._buffer: list[EpisodeRecord] = []

    def add(self, record: EpisodeRecord) -> None:
        """Buffer one episode; writes the buffer when it holds ``batch`` episodes."""
        self._buffer.append(record)
        if len(self._buffer) >= self.batch:
            self.flush()

    def add_all(self, records: Iterable[EpisodeRecord]) -> None:
        for record in records:
            self.add(record)

    def flush(self) -> list[int]:
        """Write what is buffered (in one transaction); returns the new episode ids."""
        ids = self.store.write_episodes(self._buffer)
        self._buffer.clear()
        self.written += len(ids)
        return ids

    def __enter__(self) -> BatchRecorder:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.flush()
