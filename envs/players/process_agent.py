"""A model agent that runs in its own process (``python -m SERVER``, the module the training
package registers with :func:`provide_model_process`).

The app plays checkpoints and ``hf:`` models through :class:`ProcessAgent`: the child imports
torch, loads the model and runs every forward pass, so the app's process never imports torch and
its event loop never stalls on a load (a load in a thread held the GIL and made millions of objects
for the collector to walk: ~200 ms stalls, bench/bench_watch.py). The client is the standard
library only. It is an :class:`envs.core.api.Agent` like any other (``reset``, ``act``) and also
offers what a watched checkpoint does (``explain``, ``policy_map``); ``close`` ends the child,
which also exits on its own when this process goes away (its stdin closes).
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envs.core.api import Text
from envs.players.agents import TRAIN_EXTRA, AgentChoiceError
from envs.players.explanation import Explanation, explanation_from_dict

_server_module: str | None = None
"""The module a model process runs (``python -m``), as its provider registered it."""
_LIVE: weakref.WeakSet[ProcessAgent] = weakref.WeakSet()


class AgentProcessError(RuntimeError):
    """The agent's process failed a request, or died (the message says which and why)."""


def provide_model_process(module: str) -> None:
    """The package that serves models registers the module a model process runs."""
    global _server_module
    _server_module = module


def server_module() -> str:
    """The module a model process runs; an :class:`AgentChoiceError` without a provider."""
    if _server_module is None:
        raise AgentChoiceError(
            f"a model's process needs the training extra (installed and imported): {TRAIN_EXTRA}"
        )
    return _server_module


def _source_root() -> str:
    """The folder the ``envs`` package is imported from: the child imports the same code."""
    return str(Path(__file__).resolve().parents[2])


def child_env() -> dict[str, str]:
    """This process's environment for a Python child that imports this project's code: its own
    folder first on the import path, the working folder not at all (``python -m`` would put it
    first, and a json.py or random.py there would shadow the module)."""
    return {**os.environ, **safe_path_vars()}


def safe_path_vars() -> dict[str, str]:
    """The variables of :func:`child_env` that keep a ``python -m`` child on this project's
    code (a researcher's own ``training/`` or ``data/`` package in the working folder is never
    imported in its place)."""
    return {
        "PYTHONPATH": os.pathsep.join(
            p for p in (_source_root(), os.environ.get("PYTHONPATH")) if p
        ),
        "PYTHONSAFEPATH": "1",
    }


class ProcessAgent:
    """``choice`` (a checkpoint folder or ``hf:MODEL``) for ``task_id``, in a child process.

    The child starts at once; :meth:`load` waits for the model (a loader's failure is raised as
    :class:`~envs.players.agents.AgentChoiceError` with the loader's own message). :meth:`close`, from
    any thread, stops it: a request waiting on it then fails with :class:`AgentProcessError`."""

    def __init__(
        self, choice: str, task_id: str, role: str = "agent", *, python: str | None = None
    ) -> None:
        self.choice = choice
        self.task_id = task_id
        self.role = role
        self.kind = "hf" if choice.startswith("hf:") else "checkpoint"
        self.name = choice
        self.meta: dict[str, Any] | None = None
        self._notes: dict[str, Any] | None = None
        self._task: Any = None
        self.chat = False
        """Whether the model in the child is a chat model (told by its load)."""
        self._lock = threading.Lock()
        self._closed = False
        self._stderr = tempfile.TemporaryFile()
        env = child_env()
        env.setdefault("PYTHONIOENCODING", "utf-8")
        self._proc = subprocess.Popen(
            [python or sys.executable, "-m", server_module()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            encoding="utf-8",
            bufsize=1,
        )
        _LIVE.add(self)

    # -- the protocol -----------------------------------------------------------------------------
    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._closed:
                raise AgentProcessError(f"the agent {self.name} was closed")
            proc = self._proc
            try:
                assert proc.stdin is not None and proc.stdout is not None
                proc.stdin.write(json.dumps(request) + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
            except (OSError, ValueError):  # the pipe closed under us: the child died or was stopped
                line = ""
            if not line:
                raise AgentProcessError(self._death())
        reply = json.loads(line)
        if "error" in reply:
            raise AgentProcessError(reply["error"])
        return reply

    def _death(self) -> str:
        """Why the child is gone, in words (with the end of what it wrote to stderr)."""
        if self._closed:
            return f"the agent {self.name} was stopped"
        try:
            code = self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        tail = self.stderr_tail()
        why = (
            f"the agent's process ended (exit code {code})"
            if code is not None
            else "the agent's process stopped answering"
        )
        return f"{why}: {tail}" if tail else why

    def stderr_tail(self, lines: int = 6) -> str:
        """The last lines the child wrote to stderr (a traceback's last line last)."""
        try:
            self._stderr.seek(0)
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        return " | ".join(
            line.strip() for line in text.strip().splitlines()[-lines:] if line.strip()
        )

    # -- the agent ----------------------------------------------------------------------------------
    def load(self) -> ProcessAgent:
        """Load the model in the child (seconds). Raises AgentChoiceError with the loader's message."""
        try:
            reply = self._call(
                {"op": "load", "choice": self.choice, "task": self.task_id, "role": self.role}
            )
        except AgentProcessError as e:
            self.close()
            raise AgentChoiceError(str(e)) from None
        self.kind, self.name, self.meta = reply["kind"], reply["name"], reply.get("meta")
        self.chat = bool(reply.get("chat"))
        return self

    def model_view(self, history: Sequence[Text]) -> str | None:
        """A chat model's messages for ``history`` as text, made here as the child makes them (the
        task's instructions for this side); None for any other model."""
        if not self.chat:
            return None
        from envs.players.remote import chat_view, role_prompt

        return chat_view(history, role_prompt(self.role, self._task))

    def reset(self, task: Any = None, seed: int | None = None) -> None:
        self._task = task
        self._call({"op": "reset", "seed": seed})

    def _legal(self) -> list[str] | None:
        legal = getattr(self._task, "legal_actions", None) if self.kind == "checkpoint" else None
        acts = legal() if legal is not None else None
        return list(acts) if acts else None

    def act(self, history: Sequence[Text]) -> str:
        reply = self._call({"op": "act", "history": _rows(history), "legal": self._legal()})
        self._notes = reply.get("notes")
        return str(reply["action"])

    def step_notes(self) -> dict[str, Any] | None:
        """What the agent in the child said about its last action (a guided agent's candidates), once."""
        notes, self._notes = self._notes, None
        return notes

    def explain(
        self, history: Sequence[Text], legal: Sequence[str] | None = None, top: int = 5
    ) -> Explanation:
        """What the model thinks of the state (computed in the child)."""
        reply = self._call(
            {
                "op": "explain",
                "history": _rows(history),
                "legal": list(legal) if legal else None,
                "top": int(top),
            }
        )
        return explanation_from_dict(reply["explanation"])

    def policy_map(self, task: Any) -> dict[tuple[int, int], str]:
        """The greedy action on every free cell of the fully observed maze ``task``."""
        options = {
            k: v
            for k, v in dict(getattr(task.spec, "options", None) or {}).items()
            if k != "partner"
        }
        reply = self._call({"op": "policy_map", "task": task.spec.id, "options": options})
        return {(int(r), int(c)): str(a) for r, c, a in reply["cells"]}

    @property
    def alive(self) -> bool:
        return not self._closed and self._proc.poll() is None

    def close(self, wait: bool = False) -> None:
        """Stop the child (safe from any thread, and twice); a request in flight fails. An idle
        child is asked to exit (it frees its model in a second or so), a busy one is killed; the
        exit is awaited in a background thread unless ``wait`` (the caller may be an event loop)."""
        if self._closed:
            return
        self._closed = True
        _LIVE.discard(self)
        proc = self._proc
        idle = self._lock.acquire(blocking=False)
        try:
            if not idle:  # a load or a step in flight: stop it now, the waiting request fails
                proc.kill()
            elif proc.stdin is not None:
                proc.stdin.write(json.dumps({"op": "close"}) + "\n")
                proc.stdin.flush()
                proc.stdin.close()
        except (OSError, ValueError):  # it is gone already
            proc.kill()
        finally:
            if idle:
                self._lock.release()
        if wait:
            self._reap()
        else:
            threading.Thread(target=self._reap, name="agent-process-reaper", daemon=True).start()

    def _reap(self) -> None:
        """Wait for the child's exit (killing it if it lingers) and release the pipes."""
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._lock.acquire(timeout=10):  # the request that failed has let go of the pipes
            try:
                for stream in (self._proc.stdin, self._proc.stdout, self._stderr):
                    if stream is not None:
                        stream.close()
            except OSError:
                pass
            finally:
                self._lock.release()

    def __del__(self) -> None:
        try:
            if not self._closed and self._proc.poll() is None:
                self._proc.kill()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _rows(history: Sequence[Text]) -> list[list[Any]]:
    return [[t.text, bool(t.is_action)] for t in history]


def close_all() -> None:
    """Stop every agent process still running (at exit: killed, not asked)."""
    for agent in list(_LIVE):
        agent._closed = True
        agent._proc.kill()


atexit.register(close_all)
