"""Helpers for the tests (and bench/bench_serve.py) that drive ``lmrl serve`` from a real browser: a served
server in a subprocess on a free loopback port, Debian's chromium through playwright, and a small
terminal emulator fed with what the app sends down the websocket, so a test can wait until the
screen shows a text (the page draws the terminal on a canvas: there is no DOM text to read)."""

from __future__ import annotations

import codecs
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import unicodedata
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import envs
from data.store import Store

CHROMIUM = "/usr/bin/chromium"
HOME_ROW = "Maze (fully observed)"  # the home screen's task table has loaded
NAME = "Quokkie"  # letters no key is bound to on the home screen or the unfinished-episodes dialog
LOOPBACK = "127.0.0.1"


def browser_missing() -> str | None:
    """Why the browser tests cannot run here (None: they can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install 'lmrl-tui[dev]')"
    try:
        import textual_serve  # noqa: F401
    except ImportError:
        return "textual-serve is not installed (pip install 'lmrl-tui[serve]')"
    if not (os.access(CHROMIUM, os.X_OK) or shutil.which("chromium")):
        return "Debian's chromium is not installed (apt-get install chromium)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


class Served:
    """A running ``lmrl serve`` (its process, port and the URL to open)."""

    def __init__(
        self, proc: subprocess.Popen[str], port: int, token: str | None, log: Path
    ) -> None:
        self.proc, self.port, self.token, self.log = proc, port, token, log
        self.base = f"http://{LOOPBACK}:{port}/"

    @property
    def url(self) -> str:
        return self.base + (f"?token={self.token}" if self.token else "")


@contextmanager
def served(
    db: Path, token: str | None = None, timeout: float = 30, extra: Sequence[str] = ()
) -> Iterator[Served]:
    """``lmrl serve`` on a free loopback port, writing to ``db`` (``extra``: more of its flags,
    e.g. a configured episode); killed (its whole process group, the app processes too) at the end."""
    port = free_port()
    log = db.parent / f"serve-{port}.log"
    cmd = [
        sys.executable,
        "-m",
        "lmrl_tui",
        "--db",
        str(db),
        "serve",
        "--host",
        LOOPBACK,
        "--port",
        str(port),
    ]
    env = dict(os.environ)
    env.pop("LMRL_SERVE_TOKEN", None)
    if token is not None:
        cmd += ["--token", token]
    cmd += list(extra)
    with open(log, "w") as out:
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
        )
    server = Served(proc, port, token, log)
    try:
        _wait_listening(server, timeout)
        yield server
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[Any], timeout: float = 10) -> None:
    """SIGTERM the process group (the server and the apps it started), then SIGKILL."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout)
    except ProcessLookupError:
        pass
    try:  # app processes still winding down after the server went
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _wait_listening(server: Served, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"lmrl serve stopped: {server.log.read_text()}")
        try:
            urllib.request.urlopen(server.base, timeout=2)
            return
        except urllib.error.HTTPError:
            return  # it answers (401 without the token)
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"lmrl serve did not answer within {timeout} s: {server.log.read_text()}")


CSI = re.compile(r"\x1b\[([0-9;?<=>]*)([ -/]*)([@-~])")
OSC = re.compile(r"\x1b\][^\x07\x1b]*(\x07|\x1b\\)")


class Screen:
    """Just enough of a terminal for Textual's output: cursor moves, erases and text."""

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], str] = {}
        self.row = self.col = 0
        self._decode = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending = ""

    def feed(self, data: bytes | str) -> None:
        text = self._pending + (self._decode.decode(data) if isinstance(data, bytes) else data)
        self._pending = ""
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "\x1b":
                m = CSI.match(text, i) or OSC.match(text, i)
                if m is None:
                    if len(text) - i < 64 and ("\x1b" not in text[i + 1 :]):
                        self._pending = text[i:]  # an escape split across two frames
                        return
                    i += 2  # ESC and one character (charset and keypad switches)
                    continue
                if m.re is CSI:
                    self._csi(m.group(1), m.group(3))
                i = m.end()
                continue
            if ch == "\r":
                self.col = 0
            elif ch == "\n":
                self.row += 1
            elif ch == "\b":
                self.col = max(0, self.col - 1)
            elif ch >= " ":
                self.cells[(self.row, self.col)] = ch
                self.col += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
            i += 1

    def _csi(self, params: str, final: str) -> None:
        if params.startswith("?"):
            return
        nums = [int(p) if p.isdigit() else 0 for p in params.split(";")] if params else []
        first = nums[0] if nums else 0
        if final in "Hf":
            self.row = max(first, 1) - 1
            self.col = max(nums[1] if len(nums) > 1 else 1, 1) - 1
        elif final == "G":
            self.col = max(first, 1) - 1
        elif final == "d":
            self.row = max(first, 1) - 1
        elif final in "ABCD":
            n = max(first, 1)
            self.row += {"A": -n, "B": n}.get(final, 0)
            self.col += {"C": n, "D": -n}.get(final, 0)
        elif final == "K":
            self._erase_line(first)
        elif final == "J" and first in (2, 3):
            self.cells.clear()

    def _erase_line(self, how: int) -> None:
        for r, c in [k for k in self.cells if k[0] == self.row]:
            if how == 2 or (how == 0 and c >= self.col) or (how == 1 and c <= self.col):
                del self.cells[(r, c)]

    def text(self) -> str:
        rows: dict[int, dict[int, str]] = {}
        for (r, c), ch in self.cells.items():
            rows.setdefault(r, {})[c] = ch
        lines = []
        for r in sorted(rows):
            line = rows[r]
            lines.append("".join(line.get(c, " ") for c in range(max(line) + 1)).rstrip())
        return "\n".join(lines)


class BrowserTerminal:
    """One browser page on the served app: keys in, the emulated screen out."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.screen = Screen()
        page.on("websocket", self._watch)

    def _watch(self, ws: Any) -> None:
        ws.on("framereceived", self.screen.feed)

    def open(self, url: str, timeout: float = 30) -> None:
        # The page asks Google for a font: no network in the tests, so refuse it at once.
        self.page.route(re.compile(r"^https?://(?!127\.0\.0\.1)"), lambda route: route.abort())
        self.page.goto(url, wait_until="domcontentloaded", timeout=timeout * 1000)
        self.page.wait_for_selector(
            ".xterm-helper-textarea", state="attached", timeout=timeout * 1000
        )
        self.page.focus(".xterm-helper-textarea")

    def wait_for(self, *texts: str, timeout: float = 30) -> str:
        """Wait until the screen shows one of ``texts``; returns that text."""
        shown = self.wait_until(lambda s: any(t in s for t in texts), repr(texts), timeout)
        return next(t for t in texts if t in shown)

    def wait_until(self, ok: Callable[[str], bool], what: str, timeout: float = 30) -> str:
        """Wait until ``ok(screen text)``; returns the text."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            shown = self.screen.text()
            if ok(shown):
                return shown
            self.page.wait_for_timeout(100)
        raise TimeoutError(f"the screen never showed {what}; it shows:\n{self.screen.text()}")

    def shows(self, text: str) -> bool:
        return text in self.screen.text()

    def press(self, *keys: str, pause_ms: int = 60) -> None:
        for k in keys:
            self.page.keyboard.press(k)
            self.page.wait_for_timeout(pause_ms)

    def type(self, text: str) -> None:
        self.page.keyboard.type(text, delay=40)


def launch_chromium(playwright: Any) -> Any:
    path = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    return playwright.chromium.launch(executable_path=path, args=["--no-sandbox"], timeout=60_000)


# -- the app's own flow, as a person in the browser goes through it ------------------------------
def reach_home(term: BrowserTerminal, url: str) -> str | None:
    """Open the app; if it asks for a player name (an Input, confirmed with Enter), give NAME.
    Returns the name given (None: no prompt). The prompt is recognised by what it does: the
    letters of NAME show up on the screen (typed on the home screen they do nothing)."""
    term.open(url)
    term.wait_until(lambda shown: shown.strip() != "", "anything", timeout=45)
    term.page.wait_for_timeout(2000)  # the first screen settles (a prompt may come over home)
    term.type(NAME)
    term.page.wait_for_timeout(800)
    asked = term.shows(NAME)
    if asked:  # the field may have held a name already: empty it and type NAME alone
        term.press("End")
        term.press(*["Backspace"] * (len(NAME) + 40), pause_ms=15)
        term.type(NAME)
        term.press("Enter")
    term.wait_for(HOME_ROW, timeout=30)
    return NAME if asked else None


def start_episode(term: BrowserTerminal, db: Path, task: str, title: str, seed: int) -> None:
    """From home: the task's row of the table, the dialog, the seed, Enter through the fields
    until the store holds the new episode."""
    term.press(*["ArrowDown"] * envs.ids().index(task))
    term.press("Enter")
    term.wait_for(f"New episode · {title}", timeout=20)
    # the dialog draws before its focus settles: Tab until the seed field has it, then check the
    # seed is in the field before moving on (keys typed too early land in the task list)
    term.wait_until(lambda text: "▸ Task" in text, "the task field focused", timeout=10)
    term.press("Tab")
    term.wait_until(lambda text: "▸ Seed" in text, "the seed field focused", timeout=10)
    term.type(str(seed))
    term.wait_until(
        lambda text: any("▸ Seed" in line and f" {seed} " in line for line in text.splitlines()),
        f"the seed {seed} in its field",
        timeout=10,
    )
    for _ in range(15):  # Enter moves to the next field; on the last one it starts
        term.press("Enter")
        try:
            wait_for_episode(db, task, 0, finished=False, timeout=1.5, seed=seed)
            term.wait_for(f"seed {seed}", timeout=10)  # the play screen's header
            return
        except TimeoutError:
            continue
    raise TimeoutError(f"the episode did not start; the screen shows:\n{term.screen.text()}")


def wait_for_episode(
    db: Path,
    task: str,
    n_steps: int,
    finished: bool = True,
    timeout: float = 30,
    seed: int | None = None,
) -> tuple[dict, list[dict]]:
    """The store's latest episode of ``task`` (with ``seed``, if given) once it has ``n_steps``
    steps (and is finished)."""
    deadline = time.monotonic() + timeout
    while True:
        store = Store(db)
        try:
            eps = [
                e for e in store.recent_episodes(50, task=task) if seed is None or e["seed"] == seed
            ]
            steps = store.steps(eps[0]["id"]) if eps else []
            if eps and len(steps) == n_steps and (not finished or eps[0]["status"] == "finished"):
                return eps[0], steps
        finally:
            store.close()
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"{task}: expected {n_steps} steps in the store, found {eps[:1]} with "
                f"{[(x['typed'], x['action']) for x in steps]}"
            )
        time.sleep(0.3)
