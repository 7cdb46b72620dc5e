"""The journey of the Twenty Questions oracle in a real terminal, with real keys (tmux): ``lmrl
play`` opens the configured episode, ``sometimes`` typed and Enter is stored as typed, ctrl+q keeps
the episode, the next ``lmrl`` offers it, the resumed episode takes a typed ``y``, and ctrl+q then
a abandons it. Slow (two app starts); skipped, saying so, without tmux (``apt-get install tmux``).
"""

from __future__ import annotations

import shlex
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux)"),
]


class Tmux:
    """One detached tmux session on its own server socket, running one command."""

    def __init__(self, command: str, env: dict[str, str]) -> None:
        self.socket = f"lmrl-smoke-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        self._tmux(
            "new-session",
            "-d",
            "-s",
            "s",
            "-x",
            "120",
            "-y",
            "40",
            f"env {exports} {command}; echo EXITED $?; sleep 30",
        )

    def _tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args],
            check=True,
            capture_output=True,
            text=True,
            timeout=20,
        ).stdout

    def keys(self, *keys: str, literal: bool = False) -> None:
        self._tmux("send-keys", "-t", "s", *(["-l"] if literal else []), *keys)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "s")

    def wait_for(self, text: str, timeout: float = 60) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never showed; the screen:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=20)


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute(sql).fetchall()


def wait_rows(db: Path, sql: str, want: int, timeout: float = 30) -> list[tuple]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = rows(db, sql) if db.exists() else []
        if len(got) >= want:
            return got
        time.sleep(0.2)
    raise AssertionError(f"{want} rows never came: {sql}")


STEPS = "SELECT idx, json_extract(info, '$.partner.typed'), json_extract(info, '$.partner.via') FROM steps ORDER BY idx"


def test_the_oracle_journey_in_a_real_terminal(tmp_path):
    db = tmp_path / "smoke.db"
    env = {
        "LMRL_CONFIG_DIR": str(tmp_path / "config"),
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        "LINES": "40",
    }
    lmrl = f"{shlex.quote(sys.executable)} -m lmrl_tui"
    where = f"--db {shlex.quote(str(db))} --player smoke"
    first = Tmux(
        f"{lmrl} play twenty-questions --as oracle --vs strong --seed 3 --option secret=guitar {where}",
        env,
    )
    try:
        first.wait_for("waiting for your answer")
        first.keys(
            "sometimes", literal=True
        )  # t is take-over and the Yes button was focused: never again
        first.keys("Enter")
        assert wait_rows(db, STEPS, 1) == [(0, "sometimes", "typed")]
        first.wait_for("waiting for your answer")  # the second question
        first.keys("C-q")
        first.wait_for("Keep to resume")
        first.keys("Enter")
        first.wait_for("EXITED 0")
    finally:
        first.close()
    assert rows(db, "SELECT status, player FROM episodes") == [("in_progress", "smoke")]
    second = Tmux(f"{lmrl} {where}", env)
    try:
        second.wait_for("1 unfinished episode")
        second.keys("Enter")  # resume the highlighted one
        second.wait_for("waiting for your answer")
        second.keys("y", literal=True)
        second.keys("Enter")
        assert wait_rows(db, STEPS, 2) == [(0, "sometimes", "typed"), (1, "y", "typed")]
        second.keys("C-q")
        second.wait_for("Keep to resume")
        second.keys("a")
        second.wait_for("EXITED 0")
    finally:
        second.close()
    assert rows(db, "SELECT status, player FROM episodes") == [("abandoned", "smoke")]
