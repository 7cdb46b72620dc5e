"""A stored episode replayed step by step (the app's side-by-side screen).

Tasks replay from their seed and the recorded actions (a partner's recorded replies are given
back in order), so each step's full ``state()`` can be drawn by the task's view. An episode that
does not replay (no seed, another task version, a model partner whose replies were not recorded)
still shows: its frames then carry the recorded texts only (``state`` None).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import envs
from data.session import partner_replies
from envs.core.api import history_to_str
from envs.players.session import HumanAgent, SessionClosed

if TYPE_CHECKING:
    from data.store import Store


@dataclass(frozen=True)
class Frame:
    """The episode after ``idx`` steps (0: just reset)."""

    idx: int
    action: str | None
    """The step's action (None for the start)."""
    observation: str
    reward: float
    return_so_far: float
    state: dict[str, Any] | None
    """The task's ``state()`` (with ``model_text``), None when the episode could not be replayed."""


@dataclass
class EpisodeReplay:
    """An episode's frames, from the start to its last step."""

    episode: dict[str, Any]
    frames: list[Frame] = field(default_factory=list)
    replayed: bool = False
    """Whether the task replayed it (else the frames hold the recorded texts only)."""
    note: str = ""
    """Why it was not replayed (empty when it was)."""

    @property
    def last(self) -> int:
        return len(self.frames) - 1

    def frame(self, idx: int) -> Frame:
        """The frame after ``idx`` steps, or the last one when the episode is shorter."""
        return self.frames[max(0, min(idx, self.last))]


def load_replay(store: Store, episode_id: int) -> EpisodeReplay:
    """Episode ``episode_id`` as frames (KeyError when there is no such episode)."""
    ep = store.episode(episode_id)
    if ep is None:
        raise KeyError(f"there is no episode {episode_id}")
    steps = store.steps(episode_id)
    out = EpisodeReplay(ep)
    try:
        out.frames = _replayed_frames(ep, steps)
        out.replayed = True
    except (ReplayMismatch, ValueError, KeyError, SessionClosed) as e:
        out.note = str(e)
        out.frames = _recorded_frames(ep, steps)
    return out


class ReplayMismatch(RuntimeError):
    """The recorded steps do not replay to what was recorded."""


def _state(task: Any) -> dict[str, Any]:
    state = dict(task.state())
    state.setdefault("model_text", history_to_str(task.history()))
    return state


def _replayed_frames(ep: Mapping[str, Any], steps: list[dict[str, Any]]) -> list[Frame]:
    task_id = ep["task"]
    if ep["seed"] is None:
        raise ReplayMismatch("it has no seed to replay from")
    if task_id not in envs.ids() or ep["task_version"] != envs.spec(task_id).version:
        raise ReplayMismatch("it was played with another version of the task")
    options = dict(ep["options"]) if isinstance(ep["options"], Mapping) else {}
    partner = None
    if ep["partner_kind"] not in (None, "scripted"):  # a person or a model: give its replies back
        roles = envs.spec(task_id).roles
        partner = HumanAgent(
            ep["partner_name"] or "partner", role=roles[1] if len(roles) > 1 else "partner"
        )
    task = envs.make(task_id, **options, **({"partner": partner} if partner else {}))
    try:
        first = task.reset(ep["seed"])
        if first != ep["first_observation"]:
            raise ReplayMismatch("its first observation is not the one recorded")
        frames = [Frame(0, None, first, 0.0, 0.0, _state(task))]
        total = 0.0
        for s in steps:
            if partner is not None:
                partner.replay(partner_replies(s["info"]))
            st = task.step(s["action"])
            if partner is not None:
                partner.replayed()
            if (st.observation, st.reward) != (s["observation"], s["reward"]):
                raise ReplayMismatch(f"step {len(frames)} does not replay as recorded")
            total += st.reward
            frames.append(
                Frame(len(frames), s["action"], st.observation, st.reward, total, _state(task))
            )
        return frames
    finally:
        task.close()


def _recorded_frames(ep: Mapping[str, Any], steps: list[dict[str, Any]]) -> list[Frame]:
    frames = [Frame(0, None, ep["first_observation"], 0.0, 0.0, None)]
    total = 0.0
    for s in steps:
        total += s["reward"]
        frames.append(Frame(len(frames), s["action"], s["observation"], s["reward"], total, None))
    return frames
