"""Every lmrl-tui task as an OpenEnv (``openenv-core`` 0.3) environment, from either side where a
task has two: a server (FastAPI, OpenEnv's WebSocket protocol) and its client.

* :class:`LmrlEnvironment` is the ``Environment``: ``reset(seed=..., task=..., side=...,
  partner=..., partner_reward=..., options=...)`` starts an episode (what is not given is the
  server's: :func:`create_app`'s arguments); each WebSocket session has its own environment; ``step(LmrlAction(text=reply))`` plays a chat reply (its first line is
  the move, :func:`envs.adapters.chat.action_text`); ``state`` is the episode's state.
* An observation (:class:`LmrlObservation`) is the conversation so far as chat messages (system,
  user, assistant), the new user message (``text``, "" once over), the turn's ``reward``, ``done``,
  the per-turn rewards, this side's ``episode_return``, the acting side's ``agent_return`` and
  ``success`` (where the task defines it) - all as :class:`envs.adapters.episode.ChatEpisode` keeps
  them: the turn logic is its own.
* :func:`create_app` is OpenEnv's app factory over one task; ``python -m envs.adapters.openenv_env
  --task wordle --port 8000`` serves it on loopback; :class:`LmrlEnvClient` talks to it.

This module imports openenv (``pip install 'lmrl-tui[trainers]'``); ``envs`` never imports it.
"""

from __future__ import annotations

import argparse
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_app as openenv_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from envs.adapters.chat import resolve_side
from envs.adapters.episode import ChatEpisode
from envs.adapters.seat import partner_reward as seat_reward
from envs.core import spec

__all__ = [
    "LmrlAction",
    "LmrlEnvClient",
    "LmrlEnvironment",
    "LmrlObservation",
    "LmrlState",
    "create_app",
    "main",
]


class LmrlAction(Action):
    text: str = Field(..., description="The side's chat reply; its first line is the move")


class LmrlObservation(Observation):
    messages: list[dict[str, str]] = Field(default_factory=list, description="The conversation")
    text: str = Field(default="", description="What the environment said this turn ('' once over)")
    task: str = ""
    side: str = ""
    seed: int | None = None
    turn_rewards: list[float] = Field(default_factory=list)
    episode_return: float = Field(default=0.0, description="This side's return so far")
    agent_return: float = Field(default=0.0, description="The acting side's return so far")
    success: bool | None = None


class LmrlState(State):
    task: str = ""
    side: str = ""
    partner: str | None = None
    partner_reward: str = "none"
    options: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None
    done: bool = True
    episode_return: float = 0.0


class LmrlEnvironment(Environment[LmrlAction, LmrlObservation, LmrlState]):
    """One session's episodes of ``task`` from ``side`` (see the module docstring)."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own task (and partner)

    def __init__(
        self,
        task: str = "maze-fo",
        side: str = "agent",
        partner: str | None = None,
        partner_reward: str = "none",
        options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self._defaults = (task, side, partner, partner_reward, dict(options or {}))
        self._config = self._defaults
        self._episode = ChatEpisode(task, side, partner, partner_reward, options)
        self._state = self._new_state(None, None)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task: str | None = None,
        side: str | None = None,
        partner: str | None = None,
        partner_reward: str | None = None,
        options: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> LmrlObservation:
        first = self._defaults  # what is not given is the server's (not the last episode's)
        config = (
            task or first[0],
            side or first[1],
            partner if partner is not None else first[2],
            partner_reward or first[3],
            dict(options) if options is not None else first[4],
        )
        if config != self._config:  # another task, side or partner: a new episode engine
            fresh = ChatEpisode(*config)
            self._episode.close()
            self._episode, self._config = fresh, config
        said = self._episode.reset(seed)
        self._state = self._new_state(seed, episode_id)
        return self._observe(said, None)

    def step(
        self, action: LmrlAction, timeout_s: float | None = None, **kwargs: Any
    ) -> LmrlObservation:
        said, reward, _ = self._episode.step(action.text)
        self._state.step_count += 1
        return self._observe(said, reward)

    @property
    def state(self) -> LmrlState:
        self._state.done = self._episode.done
        self._state.episode_return = self._episode.total_return
        return self._state

    def close(self) -> None:
        self._episode.close()

    def _new_state(self, seed: int | None, episode_id: str | None) -> LmrlState:
        task, _, partner, partner_reward, options = self._config
        return LmrlState(
            episode_id=episode_id or str(uuid.uuid4()),
            task=task,
            side=self._episode.role,
            partner=partner,
            partner_reward=partner_reward,
            options=options,
            seed=seed,
            done=self._episode.done,
        )

    def _observe(self, said: str, reward: float | None) -> LmrlObservation:
        ep = self._episode
        return LmrlObservation(
            messages=[dict(m) for m in ep.conversation.messages],
            text=said,
            task=ep.task_id,
            side=ep.role,
            seed=self._state.seed,
            turn_rewards=list(ep.rewards),
            episode_return=ep.total_return,
            agent_return=ep.agent_return,
            success=ep.success() if ep.done else None,
            reward=reward,
            done=ep.done,
        )


class LmrlEnvClient(EnvClient[LmrlAction, LmrlObservation, LmrlState]):
    """OpenEnv's (async) client of an lmrl-tui server; ``.sync()`` for the blocking one."""

    def _step_payload(self, action: LmrlAction) -> dict[str, Any]:
        return {"text": action.text}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[LmrlObservation]:
        obs = LmrlObservation(
            **payload.get("observation", {}),
            reward=payload.get("reward"),
            done=payload.get("done", False),
        )
        return StepResult(observation=obs, reward=obs.reward, done=obs.done)

    def _parse_state(self, payload: dict[str, Any]) -> LmrlState:
        return LmrlState(**payload)


def create_app(
    task: str = "maze-fo",
    side: str = "agent",
    partner: str | None = None,
    partner_reward: str = "none",
    options: Mapping[str, Any] | None = None,
    max_concurrent_envs: int = 8,
) -> Any:
    """OpenEnv's FastAPI app serving ``task`` from ``side`` (each session its own environment)."""
    opts = dict(options or {})
    resolve_side(spec(task, **opts), side)  # a bad task, option or side fails here
    seat_reward(partner_reward, [])

    def factory() -> LmrlEnvironment:
        return LmrlEnvironment(task, side, partner, partner_reward, opts)

    env: Callable[[], LmrlEnvironment] = factory
    return openenv_app(
        env,
        LmrlAction,
        LmrlObservation,
        env_name=f"lmrl-{task}",
        max_concurrent_envs=max_concurrent_envs,
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m envs.adapters.openenv_env", description="Serve a task over OpenEnv."
    )
    p.add_argument("--task", default="maze-fo", help="the task id (lmrl tasks)")
    p.add_argument("--side", default="agent", help="agent, partner or a role name")
    p.add_argument("--partner", default=None, help="who plays the other side (built in)")
    p.add_argument("--partner-reward", default="none", help="none, zero-sum or shared")
    p.add_argument(
        "--options", default="{}", help='the task\'s options as JSON: {"words": "small"}'
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--sessions", type=int, default=8, help="concurrent sessions at most")
    a = p.parse_args(argv)
    app = create_app(a.task, a.side, a.partner, a.partner_reward, json.loads(a.options), a.sessions)
    import uvicorn

    uvicorn.run(app, host=a.host, port=a.port)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
