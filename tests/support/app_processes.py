"""An app process that can be killed, for tests of what a crash leaves behind: a holder id
(``host:pid:token``, :mod:`data.holds`) written with a stand-in process's pid counts as a live app
while the process runs, and as a stopped one once :meth:`StandIn.kill` has ended it (as the app's
own process would be by ``kill -9`` or a reboot). The app itself runs in the test's process, with
its ``holder`` set to the stand-in's."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class StandIn:
    """A sleeping process whose pid stands for one app's."""

    def __init__(self, token: str = "app") -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(900)"])
        self.holder = f"{socket.gethostname()}:{self.proc.pid}:{token}"

    def kill(self) -> None:
        """The app's process is killed (no clean-up of any kind runs)."""
        self.proc.kill()
        self.proc.wait()


@contextmanager
def stand_ins() -> Iterator[Callable[[str], StandIn]]:
    """Make stand-ins (``make(token)``); every one still running is killed on the way out."""
    made: list[StandIn] = []

    def make(token: str = "app") -> StandIn:
        made.append(StandIn(token))
        return made[-1]

    try:
        yield make
    finally:
        for s in made:
            if s.proc.poll() is None:
                s.kill()
