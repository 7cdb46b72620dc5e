"""The evaluation process of ``experiments/gpu_campaign.py``: one process beside the training that
runs each ``lmrl eval`` in process (torch imported and the task code loaded once, not once per
checkpoint), as JSON lines: an argv in on stdin, ``{"rc", "result"}`` out on stdout.

    python experiments/campaign_worker.py      # started by the campaign, not by hand
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def popen(cmd: list[str], log: Path, threads: int = 1, stdin: bool = False) -> subprocess.Popen:
    """``cmd`` started with ``threads`` CPU threads, this checkout first on the path, its stderr
    in ``log`` and its stdout piped."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": str(ROOT)}
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as err:
        return subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        )


class EvalWorker:
    """A process that runs ``lmrl eval`` argv sent as JSON lines on its stdin, in process
    (:func:`eval_worker`), and answers each with a JSON line (exit status and result)."""

    def __init__(self, log: Path, threads: int) -> None:
        import queue

        cmd = [sys.executable, str(Path(__file__).resolve())]
        self.proc = popen(cmd, log, threads, stdin=True)
        self.replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.replies.put(line)
        self.replies.put(None)

    def ask(self, argv: list[str], timeout: float) -> dict[str, Any] | None:
        """The reply to ``argv``, or None when the worker failed or ``timeout`` passed (then it is
        killed: the deadline holds)."""
        import queue

        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(argv) + "\n")
            self.proc.stdin.flush()
            line = self.replies.get(timeout=max(timeout, 0.01))
        except (OSError, queue.Empty):
            self.proc.kill()
            return None
        return json.loads(line) if line else None

    def close(self) -> None:
        if self.proc.stdin is not None and self.proc.poll() is None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def eval_worker() -> int:
    """The evaluation process: one ``lmrl eval`` argv per stdin line, one reply per stdout line."""
    from training.algorithms import run_command
    from training.reproduce.runners import in_process, last_json

    run = in_process(run_command)
    for line in sys.stdin:
        rc, out = run(json.loads(line))
        print(json.dumps({"rc": rc, "result": last_json(out)}, default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(eval_worker())
