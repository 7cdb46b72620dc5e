"""Training the other side of a dialogue task (``lmrl train bc --side partner``): the Car Dealer
buyer, the Twenty Questions or Guess My City oracle, learnt from stored episodes in which that side
was played by a person (hot-seat, served), a model or the embedded partner (no torch at import).

A stored episode keeps the agent's actions and, in each step's ``info``, what the partner replied
(:func:`data.session.partner_replies`). Replaying it from its seed with those replies played back
shows the partner's *view* before each reply (what the task hands a partner: the buyer's persona
line and the dialogue; the oracle's prompt with the secret), so every reply becomes one window:
the view (``history_to_str``, as a checkpoint playing that side reads it) and the reply as the
action. The tasks define no reward for the partner side, so this is behaviour cloning; a dataset
query picks whose replies are learnt (``--partner-kind human`` for people, ``--player`` …).

A checkpoint trained this way plays the partner side wherever a partner can be chosen
(``lmrl generate --partner PATH``, the new-episode dialog).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import envs
from data.datasets import load_episodes
from data.session import partner_replies
from envs.core import Text, history_to_str

if TYPE_CHECKING:
    from training.datasets.windows import Window


class _Recorder:
    """A partner that gives back recorded replies in order and keeps the view of each."""

    kind = "replay"
    name = "replay"

    def __init__(self) -> None:
        self.replies: list[str] = []
        self.seen: list[tuple[str, str]] = []

    def reset(self, task: Any = None, seed: int | None = None) -> None:
        pass

    def act(self, history: Sequence[Text]) -> str:
        if not self.replies:
            raise _NoReplay("the recorded partner replies ran out")
        reply = self.replies.pop(0)
        self.seen.append((history_to_str(history), reply if reply.endswith("\n") else reply + "\n"))
        return reply


class _NoReplay(RuntimeError):
    pass


def recorded_replies(info: Any) -> list[str]:
    """What the partner replied in a stored step: :func:`data.session.partner_replies`, or the
    question tasks' external answer (``info["reply"]`` when ``answer_source`` is the partner)."""
    replies = partner_replies(info)
    if not replies and isinstance(info, dict) and info.get("answer_source") == "partner":
        reply = info.get("reply")
        replies = [reply] if isinstance(reply, str) else []
    return replies


def partner_views(
    episode: dict[str, Any], steps: Sequence[dict[str, Any]]
) -> list[tuple[str, str]]:
    """(the partner's view, its reply) for every reply of a stored episode, by replaying it; raises
    :class:`ValueError` when the episode does not replay (no seed, no recorded replies, another
    version of the task, a step that does not replay as recorded)."""
    task_id = episode["task"]
    if envs.spec(task_id).roles[1:] == ():
        raise ValueError(f"{task_id} has no partner side")
    if episode.get("seed") is None:
        raise ValueError("it has no seed to replay from")
    if episode.get("task_version") != envs.spec(task_id).version:
        raise ValueError("it was played with another version of the task")
    options = {
        k: v
        for k, v in dict(episode.get("options") or {}).items()
        if k not in ("partner", "partner_replies")
    }
    rec = _Recorder()
    task = envs.make(task_id, **options, partner=rec)
    try:
        if task.reset(episode["seed"]) != episode["first_observation"]:
            raise ValueError("its first observation is not the one recorded")
        for s in steps:
            rec.replies = recorded_replies(s.get("info"))
            try:
                st = task.step(s["action"])
            except _NoReplay:
                raise ValueError(
                    "a step has no recorded partner reply (the embedded partner answered)"
                ) from None
            if rec.replies or (st.observation, st.reward) != (s["observation"], s["reward"]):
                raise ValueError("a step does not replay as recorded")
    finally:
        task.close()
    return rec.seen


def partner_windows(store, ids: Sequence[int]) -> tuple[list[Window], int]:
    """One window per partner reply of the episodes ``ids`` (view, reply), chained per episode;
    returns (windows, how many episodes did not replay and were left out)."""
    from training.datasets.windows import Window

    out: list[Window] = []
    skipped = 0
    for ep in load_episodes(store, list(ids)):
        steps = [s for s in ep.steps if s.get("role", "agent") == "agent"]
        try:
            seen = partner_views(ep.episode, steps)
        except ValueError:
            skipped += 1
            continue
        for k, (view, reply) in enumerate(seen):
            last = k == len(seen) - 1
            nxt = None if last else seen[k + 1][0]
            out.append(
                Window([(view, False, 0.0), (reply, True, 0.0)], last, nxt, ep.id, keep_end=True)
            )
    return out, skipped
