"""Process helpers for the tests that check no engine or worker process, thread or file is left
behind (read from /proc: Linux only, like the rest of these checks)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable


def _stat(pid: str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()


def live_children() -> list[int]:
    """Processes whose parent is this test process (zombies count: they were not reaped)."""
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(entry)) is not None and int(fields[1]) == me:
            out.append(int(entry))
    return out


def group_members(pgid: int) -> list[int]:
    """Running processes of the process group ``pgid`` (zombies left out: an orphan that died
    waits for init to reap it, and holds nothing any more)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(entry)) is not None:
            if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
                out.append(int(entry))
    return out


def open_fds() -> set[int]:
    """This process's open file descriptors (without the one that listing them used)."""
    out = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own, closed by now
            continue
        out.add(int(fd))
    return out


def thread_names() -> list[str]:
    return sorted(t.name for t in threading.enumerate())


def settle(done: Callable[[], bool], timeout: float = 10.0, every: float = 0.05) -> bool:
    """Wait until ``done()`` holds (True) or ``timeout`` seconds pass (False)."""
    end = time.monotonic() + timeout
    while True:
        if done():
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(every)


class Baseline:
    """What this process holds now (children, threads, file descriptors), to compare with later."""

    def __init__(self) -> None:
        self.children = set(live_children())
        self.threads = {t.ident for t in threading.enumerate()}
        self.fds = open_fds()

    def new_children(self) -> set[int]:
        return set(live_children()) - self.children

    def new_threads(self) -> list[str]:
        return sorted(t.name for t in threading.enumerate() if t.ident not in self.threads)

    def new_fds(self) -> dict[int, str]:
        out = {}
        for fd in open_fds() - self.fds:
            try:
                out[fd] = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:  # closed meanwhile (listing /proc/self/fd opens one itself)
                pass
        return out

    def leaks(self, *, fd_slack: int = 0, timeout: float = 10.0) -> dict[str, object]:
        """What is still held beyond the baseline once things have had ``timeout`` s to settle
        (empty when nothing leaked); ``fd_slack`` descriptors more are tolerated."""

        def clean() -> bool:
            return (
                not self.new_children()
                and not self.new_threads()
                and len(self.new_fds()) <= fd_slack
            )

        settle(clean, timeout)
        out: dict[str, object] = {}
        if kids := self.new_children():
            out["children"] = sorted(kids)
        if threads := self.new_threads():
            out["threads"] = threads
        if len(fds := self.new_fds()) > fd_slack:
            out["fds"] = fds
        return out
