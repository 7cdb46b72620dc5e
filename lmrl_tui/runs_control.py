"""Training runs started from the app: launch ``lmrl train`` as a detached process, find it again,
tell whether it still lives, and stop it (no textual, no torch: plain processes and files). The
command line is checked first with the real ``train`` parser (:func:`parse_train_argv`).

A launch writes two files into the run folder (the ``--out`` of ``lmrl train``):

* ``launch.json``: the process id, the command line and when it started. The run's row in the
  store is written by the training process itself once its data is ready, with the same
  ``out_dir``, so the app finds the process of a run through its folder.
* ``train.log``: the process's stdout and stderr.

``lmrl train`` started on the command line writes ``launch.json`` itself (:func:`record_self`,
without a log: its output goes to its terminal), so the app can tell whether such a run still
lives, and stop it, as it does for its own.

The process runs in a session of its own (``start_new_session``), so closing the app neither
signals nor waits for it. :func:`stop` sends SIGINT to its process group (training records the run
as failed in its ``finally`` and ``lmrl`` exits 130), then SIGTERM after a grace period, then
SIGKILL.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from envs.players.process_agent import child_env

STOP_BY_SIGINT = "LMRL_STOP_BY_SIGINT"
"""Set (to ``1``) for the runs started here: "stop" sends them SIGINT, and ``lmrl`` then takes it
even if this process ignored it (see ``lmrl_tui.cli.entry.take_sigint_if_asked``)."""
LAUNCH_FILE = "launch.json"
LOG_FILE = "train.log"
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}
"""The processes this app started, so that one that ended is reaped (not left a zombie)."""


@dataclass(frozen=True)
class Launch:
    """A training process started from the app."""

    pid: int
    out_dir: str
    argv: list[str]
    log: str
    started_at: str
    origin: str = "app"
    """``app`` (started from the runs screen) or ``cli`` (``lmrl train`` in a terminal)."""


def train_argv(
    db_path: str | Path, algo: str, task: str, out_dir: str | Path, flags: Sequence[str] = ()
) -> list[str]:
    """The command line of ``lmrl --db DB train ALGO --task TASK --out OUT --no-progress FLAGS``
    run by this Python (the same environment as the app)."""
    return [
        sys.executable,
        "-m",
        "lmrl_tui.cli",
        "--db",
        str(db_path),
        "train",
        algo,
        "--task",
        task,
        "--out",
        str(out_dir),
        "--no-progress",
        *flags,
    ]


def default_out_dir(db_path: str | Path, algo: str, task: str, now: datetime | None = None) -> Path:
    """``runs/ALGO-TASK-YYYYmmdd-HHMMSS`` beside the store's file (``%bc`` is spelt ``pbc``)."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    name = f"{algo.replace('%', 'p')}-{task}-{stamp}"
    return Path(db_path).resolve().parent / "runs" / name


def algorithm_names() -> list[str]:
    """The ``lmrl train`` algorithms, from the registry (torch-free), and which are online."""
    from training.algorithms import ALGORITHMS

    return list(ALGORITHMS)


def is_online(algo: str) -> bool:
    from training.algorithms import lookup

    found = lookup(algo)
    return bool(found and found.online)


def parse_train_argv(argv: list[str]) -> str | None:
    """Parse ``[--db DB] train ALGO ...`` with the real parser: None if it is accepted, else
    argparse's one-line complaint."""
    from training.cli import build_parser

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            build_parser("lmrl").parse_args(argv)
    except SystemExit:
        lines = [x for x in err.getvalue().splitlines() if x.strip()]
        return lines[-1].split("error: ", 1)[-1] if lines else "the command line is not valid"
    return None


def start(argv: Sequence[str], out_dir: str | Path) -> Launch:
    """Start ``argv`` detached, its output into ``OUT/train.log``; writes ``OUT/launch.json``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log = out / LOG_FILE
    with log.open("ab") as f:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=f,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            env={**child_env(), STOP_BY_SIGINT: "1"},  # it takes SIGINT even if we ignore it
        )
    _CHILDREN[proc.pid] = proc
    launch = Launch(
        proc.pid, str(out), list(argv), str(log), datetime.now(UTC).isoformat(timespec="seconds")
    )
    _write_launch(out, launch)
    return launch


def _write_launch(out: Path, launch: Launch) -> None:
    """Write ``OUT/launch.json`` whole (a temporary file named by this process, then a rename)."""
    tmp = out / f"{LAUNCH_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(asdict(launch), indent=1))
    tmp.replace(out / LAUNCH_FILE)


def _main_process() -> bool:
    """False in the other processes of a multi-process launch (accelerate, torchrun)."""
    return all(os.environ.get(k, "0") in ("", "0") for k in ("RANK", "LOCAL_RANK"))


def record_self(out_dir: str | Path) -> Launch | None:
    """Write ``OUT/launch.json`` for this process (``lmrl train`` run on the command line), unless
    the app launched it (the file names this process already) or this is not the main process of
    a multi-process launch. Never raises: a folder that cannot be written is the run's own error
    to report. Returns what was recorded, or None."""
    if not _main_process():
        return None
    out = Path(out_dir)
    mine = read_launch(out)
    if mine is not None and mine.pid == os.getpid():
        return None
    argv = _cmdline(os.getpid()) or [sys.executable, *sys.argv]
    launch = Launch(
        os.getpid(), str(out), argv, "", datetime.now(UTC).isoformat(timespec="seconds"), "cli"
    )
    try:
        out.mkdir(parents=True, exist_ok=True)
        _write_launch(out, launch)
    except OSError:
        return None
    return launch


def forget_self(out_dir: str | Path, launch: Launch, remove_folder: bool = True) -> None:
    """Undo :func:`record_self` for a run that wrote nothing else (refused before it began): the
    record goes, and with ``remove_folder`` (it made the folder) the folder too. Never raises."""
    out = Path(out_dir)
    try:
        if read_launch(out) != launch or [p.name for p in out.iterdir()] != [LAUNCH_FILE]:
            return
        (out / LAUNCH_FILE).unlink()
        if remove_folder:
            out.rmdir()
    except OSError:
        pass


def read_launch(out_dir: str | Path | None) -> Launch | None:
    """The launch recorded in a run folder, or None (none recorded: a run of an older version, or
    one that could not write its folder)."""
    if not out_dir:
        return None
    try:
        d = json.loads((Path(out_dir) / LAUNCH_FILE).read_text())
        return Launch(
            int(d["pid"]),
            str(d["out_dir"]),
            list(d["argv"]),
            str(d["log"]),
            str(d["started_at"]),
            str(d.get("origin", "app")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _proc_stat_state(pid: int) -> str | None:
    """The state letter of /proc/PID/stat (``Z``: a zombie), None without /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()[0]


def _cmdline(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [p.decode(errors="replace") for p in raw.split(b"\0") if p]


def is_alive(launch: Launch) -> bool:
    """Whether the launched process still runs (a process that reuses its id does not count:
    where /proc exists, its command line must be the launch's)."""
    child = _CHILDREN.get(launch.pid)
    if child is not None:  # ours: poll() is exact, and reaps it once it has ended
        if child.poll() is None:
            return True
        _CHILDREN.pop(launch.pid, None)
        return False
    try:
        os.kill(launch.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process took the id
        return False
    if _proc_stat_state(launch.pid) in ("Z", "X"):
        return False
    cmd = _cmdline(launch.pid)
    return cmd is None or cmd == [a for a in launch.argv if a]


def _signal(launch: Launch, sig: signal.Signals) -> None:
    try:
        if os.getpgid(launch.pid) == launch.pid:  # its own session: the whole group (workers too)
            os.killpg(launch.pid, sig)
        else:
            os.kill(launch.pid, sig)
    except ProcessLookupError:
        pass


def _wait_gone(launch: Launch, seconds: float, poll: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        if not is_alive(launch):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll)


def stop(launch: Launch, grace: float = 15.0, term_grace: float = 5.0, poll: float = 0.1) -> str:
    """Stop the process: SIGINT, SIGTERM after ``grace`` seconds, SIGKILL after ``term_grace``
    more. Returns the signal that ended it (``SIGINT`` ...) or ``"already gone"``."""
    if not is_alive(launch):
        return "already gone"
    for sig, wait in (
        (signal.SIGINT, grace),
        (signal.SIGTERM, term_grace),
        (signal.SIGKILL, term_grace),
    ):
        _signal(launch, sig)
        if _wait_gone(launch, wait, poll):
            return sig.name
    raise RuntimeError(f"process {launch.pid} did not end after SIGKILL")


def log_tail(launch: Launch, lines: int = 20) -> list[str]:
    """The last lines of the launch's log (its errors, when it ended early); none for a run
    started on the command line (its output went to its terminal)."""
    if not launch.log:
        return []
    try:
        with open(launch.log, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 8192))
            return f.read().decode("utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return []
