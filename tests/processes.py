"""Process helpers for the tests that check no engine or worker process is left behind."""

from __future__ import annotations

import os


def live_children() -> list[int]:
    """Processes whose parent is this test process (zombies count: they were not reaped)."""
    me, out = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[1]) == me:
            out.append(int(entry))
    return out
