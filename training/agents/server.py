"""A model agent in its own process: ``python -m training.agents.server``.

The app runs checkpoints and ``hf:`` models here, so torch, the model's load and every forward
pass happen in another process: the app's event loop never waits on them (no GIL held by a load,
no collection walking millions of tensors), and a crash or a kill takes only this process down.
:class:`envs.players.process_agent.ProcessAgent` is the client.

The protocol is one JSON object per line each way: a request on stdin, its reply on stdout (the
real stdout; anything a library prints goes to stderr). The first request is ``load``; then

* ``{"op": "load", "choice": str, "task": str, "role": str}`` → ``{"name", "kind", "meta"}``: the
  agent ``envs.players.agents.make_agent`` makes of ``choice`` (a checkpoint folder or ``hf:MODEL``).
* ``{"op": "reset", "seed": int | null}`` → ``{}``.
* ``{"op": "act", "history": [[text, is_action], ...], "legal": [str] | null}`` → ``{"action"}``
  and, when the agent says what it weighed (``step_notes``, a guided agent), ``"notes"``;
  ``legal`` is what the task's ``legal_actions()`` returned (the reranker chooses among them).
* ``{"op": "explain", "history", "legal", "top"}`` → ``{"explanation"}``
  (:func:`envs.players.explanation.explanation_to_dict`).
* ``{"op": "policy_map", "task": str, "options": {...}}`` → ``{"cells": [[row, col, action], ...]}``.
* ``{"op": "close"}`` → ``{}``, then the process exits; so it does when stdin closes.

A failure replies ``{"error": message, "type": exception class name}`` and the process goes on.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import IO, Any


class _Legal:
    """What the agent sees of the task: its spec (a chat model's instructions for its role) and the
    legal actions the client sent with the request."""

    def __init__(self) -> None:
        self.actions: list[str] | None = None
        self.spec: Any = None

    def legal_actions(self) -> list[str] | None:
        return self.actions


def _history(rows: Sequence[Sequence[Any]]) -> list:
    from envs.core import Text

    return [Text(str(text), bool(is_action)) for text, is_action in rows]


class AgentServer:
    """Answers one request at a time for one agent."""

    def __init__(self) -> None:
        self.agent: Any = None
        self.legal = _Legal()

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        if op == "load":
            return self._load(req)
        if op == "close":
            return {}
        if self.agent is None:
            raise RuntimeError(f"{op!r} before the agent was loaded")
        if op == "reset":
            self.agent.reset(self.legal, req.get("seed"))
            return {}
        if op == "act":
            self.legal.actions = req.get("legal")
            from envs.core.api import step_notes

            action = self.agent.act(_history(req["history"]))
            notes = step_notes(self.agent)
            return {"action": action, **({"notes": notes} if notes else {})}
        if op == "explain":
            from envs.players.explanation import explanation_to_dict

            explain = getattr(self.agent, "explain", None)
            if explain is None:
                raise ValueError("values are shown for trained checkpoints only")
            expl = explain(_history(req["history"]), req.get("legal"), top=int(req.get("top", 5)))
            return {"explanation": explanation_to_dict(expl)}
        if op == "policy_map":
            import envs

            mapper = getattr(self.agent, "policy_map", None)
            if mapper is None:
                raise ValueError("a policy map is drawn for trained checkpoints only")
            task = envs.make(req["task"], **dict(req.get("options") or {}))
            try:
                cells = mapper(task)
            finally:
                task.close()
            return {"cells": [[r, c, a] for (r, c), a in cells.items()]}
        raise ValueError(f"unknown request {op!r}")

    def _load(self, req: dict[str, Any]) -> dict[str, Any]:
        from envs.players.agents import MODEL_KINDS, make_agent

        agent = make_agent(req["task"], req["choice"], role=req.get("role", "agent"))
        import envs

        self.legal.spec = envs.spec(req["task"]) if req["task"] in envs.ids() else None
        if getattr(agent, "kind", None) == "hf":
            agent.load()  # now, while the app shows it loading, not on the first move
        if (
            getattr(agent, "kind", None) not in MODEL_KINDS
        ):  # a scripted policy needs the task itself
            raise ValueError(
                f"{req['choice']!r} is not a model: this process serves checkpoints and models only"
            )
        self.agent = agent
        meta = getattr(agent, "meta", None)
        return {
            "name": str(getattr(agent, "name", req["choice"])),
            "kind": str(getattr(agent, "kind", "agent")),
            "meta": json.loads(json.dumps(meta, default=str)) if meta is not None else None,
            "chat": getattr(agent, "chat", None) is True,
        }


def serve(requests: IO[str], replies: IO[str]) -> None:
    """Answer ``requests`` line by line until a ``close`` or the end of the input."""
    server = AgentServer()
    for line in requests:
        if not line.strip():
            continue
        req: Any = {}
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("a request is a JSON object")
            reply = server.handle(req)
        except Exception as e:  # noqa: BLE001 - every failure is the client's to show
            reply = {"error": str(e) or type(e).__name__, "type": type(e).__name__}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
        if isinstance(req, dict) and req.get("op") == "close":
            return


def main() -> None:
    # The protocol keeps the real stdout; whatever a library prints goes to stderr instead.
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdin.reconfigure(encoding="utf-8")
    serve(sys.stdin, replies)


if __name__ == "__main__":
    main()
