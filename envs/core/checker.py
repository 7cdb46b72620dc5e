"""``check_task``: the contract every registered task must honour (after Gymnasium's env_checker).

It checks the API shape, seeded determinism, that replaying recorded actions from the recorded
seed reproduces an episode exactly, that rewards stay in ``spec.reward_range``, that episodes end
within the horizon, and that arbitrary text (empty, huge, non-ASCII, control characters) is an
invalid action with a defined reward rather than an exception (and that ``parse_input`` and
``parse_reply`` raise :class:`InvalidInput`, if anything, for it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from envs.core import (
    Agent,
    Episode,
    InvalidInput,
    Step,
    Task,
    TaskSpec,
    make,
    make_policy,
    policies,
    replay,
    run_episode,
)

NASTY_INPUTS = [
    "",
    "\n",
    " ",
    "x" * 100_000,
    "ünïcödé ✓ 漢字\n",
    "\x00\x01\x1b[31m\n",
    "move up",
    "\t\r\n",
    "\ud800 lone surrogate \udfff\n",
    "\u2028\u2029\x85\x7f\x9b\ufeff\n",
    "two\nlines\n",
    "\U0001f600" * 1000,
]
"""A fixed sample of what people and models type; tests/envs/test_reliability_fuzz_tasks.py
tries every task with random text of these kinds (hypothesis, a test dependency only)."""


class TaskCheckError(AssertionError):
    pass


def _fail(task_id: str, msg: str) -> None:
    raise TaskCheckError(f"{task_id}: {msg}")


def _episode_signature(ep: Episode) -> list[Any]:
    return [ep.first_observation] + [
        (t.action, t.observation, t.reward, t.terminated, t.truncated) for t in ep.transitions
    ]


def _check_step(task_id: str, spec: TaskSpec, st: Any) -> None:
    if not isinstance(st, Step):
        _fail(task_id, f"step() must return envs.Step, got {type(st).__name__}")
    if not isinstance(st.observation, str):
        _fail(task_id, "observation must be a str")
    if not isinstance(st.reward, float | int):
        _fail(task_id, "reward must be a number")
    lo, hi = spec.reward_range
    if not (lo <= st.reward <= hi):
        _fail(task_id, f"reward {st.reward} outside reward_range {spec.reward_range}")
    if not isinstance(st.info, Mapping):
        _fail(task_id, "info must be a mapping")
    try:
        json.dumps(dict(st.info))
    except (TypeError, ValueError) as e:
        _fail(task_id, f"info must be JSON-serialisable: {e}")


SPEC_FACTS = {
    "window": ("episode", "step", "history"),
    "decoding": ("sample", "rerank"),
    "reply_kind": ("text", "yes-no"),
}
"""The values each task fact on :class:`TaskSpec` may take."""


def _check_facts(task_id: str, spec: Any) -> None:
    for name, allowed in SPEC_FACTS.items():
        if getattr(spec, name) not in allowed:
            _fail(task_id, f"spec.{name} is {getattr(spec, name)!r}; choose one of {allowed}")
    if spec.reply_kind != "text" and len(spec.roles) < 2:
        _fail(task_id, "a reply kind needs a partner role")


def check_task(
    task_id: str,
    *,
    seeds: tuple[int, ...] = (0, 1, 2),
    policy: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Raise :class:`TaskCheckError` if the task breaks the contract."""
    opts = dict(options or {})
    task = make(task_id, **opts)
    spec = task.spec
    if not isinstance(task, Task):
        _fail(task_id, "does not implement the Task protocol")
    if spec.id != task_id:
        _fail(task_id, f"spec.id is {spec.id!r}")

    _check_facts(task_id, spec)
    first = task.reset(seeds[0])
    if not isinstance(first, str):
        _fail(task_id, "reset() must return the first observation as str")
    if spec.decoding == "rerank" and not task.legal_actions():
        _fail(task_id, "decoding 'rerank' needs legal_actions() to list the actions")
    json.dumps(task.state())
    hist = task.history()
    if not hist or hist[-1].is_action:
        _fail(task_id, "history() after reset must end with an observation")

    names = policies(task_id)
    pol_name = policy or ("behaviour" if "behaviour" in names else names[0])

    def play(seed: int) -> Episode:
        agent: Agent = make_policy(task_id, pol_name)
        t = make(task_id, **opts)
        ep = run_episode(t, agent, seed)
        for tr in ep.transitions:
            _check_step(
                task_id, spec, Step(tr.observation, tr.reward, tr.terminated, tr.truncated, tr.info)
            )
        return ep

    for seed in seeds:
        a, b = play(seed), play(seed)
        if _episode_signature(a) != _episode_signature(b):
            _fail(task_id, f"two runs from seed {seed} differ (not deterministic under a seed)")
        if not a.done:
            _fail(task_id, f"episode from seed {seed} did not end within the step limit")
        if len(a.transitions) > spec.max_turns + 1:
            _fail(task_id, f"episode ran {len(a.transitions)} steps, max_turns {spec.max_turns}")
        again = replay(make(task_id, **opts), seed, [t.action for t in a.transitions])
        if _episode_signature(again) != _episode_signature(a):
            _fail(task_id, f"replaying the actions from seed {seed} does not reproduce the episode")

    # Bad input is an invalid action with a defined reward, never an exception.
    for text in NASTY_INPUTS:
        t = make(task_id, **opts)
        t.reset(seeds[0])
        try:
            st = t.step(text)
        except Exception as e:  # noqa: BLE001 - the point is to report any exception
            _fail(task_id, f"step({text[:20]!r}) raised {type(e).__name__}: {e}")
        _check_step(task_id, spec, st)
        json.dumps(t.state())
        for side in ("parse_input", "parse_reply"):
            try:
                getattr(t, side)(text)
            except InvalidInput:
                pass
            except Exception as e:  # noqa: BLE001
                _fail(
                    task_id, f"{side}({text[:20]!r}) raised {type(e).__name__} (use InvalidInput)"
                )
