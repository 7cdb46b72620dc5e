"""Behaviour fingerprint: ``lmrl generate TASK --episodes N --seed S`` then ``lmrl export --format
jsonl`` for every task id, through the real command line, into a fresh store.

Wall-clock fields (``started_at``, ``ended_at``) are the only ones that differ between two runs of
the same code; they are blanked before hashing. Everything else must be byte-identical.

    python scripts/golden_exports.py --out DIR            # write DIR/TASK.jsonl and DIR/hashes.json
    python scripts/golden_exports.py --check FILE.json     # compare with stored hashes (exit 1 if not equal)

``tests/golden/export_hashes.json`` holds the hashes of the code as it was before the package
restructure; ``tests/test_golden_exports.py`` (slow) checks them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

TASKS = [
    "maze-fo",
    "maze-po",
    "textnav-fo",
    "textnav-po",
    "wordle",
    "wordle-lmrl",
    "chess",
    "endgames",
    "twenty-questions",
    "guess-city",
    "car-dealer",
]
_CLOCK = re.compile(r'"(started_at|ended_at)": "[^"]*"')


def _lmrl(*args: str, db: Path) -> None:
    env = dict(os.environ, LMRL_DB=str(db))
    subprocess.run(
        [sys.executable, "-m", "lmrl_tui", *args],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def fingerprint(task: str, episodes: int, seed: int, workdir: Path) -> str:
    db = workdir / f"{task}.db"
    out = workdir / f"{task}.jsonl"
    _lmrl("generate", task, "--episodes", str(episodes), "--seed", str(seed), "--quiet", db=db)
    _lmrl("export", "--task", task, "--format", "jsonl", "-o", str(out), db=db)
    text = _CLOCK.sub(lambda m: f'"{m.group(1)}": ""', out.read_text(encoding="utf-8"))
    out.write_text(text, encoding="utf-8")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--episodes", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tasks", nargs="*", default=TASKS)
    p.add_argument("--out", type=Path, help="folder for the exports and hashes.json")
    p.add_argument("--check", type=Path, help="hashes.json to compare with")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        work = a.out or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        hashes = {t: fingerprint(t, a.episodes, a.seed, work) for t in a.tasks}
        doc = {"episodes": a.episodes, "seed": a.seed, "sha256": hashes}
        if a.out:
            (a.out / "hashes.json").write_text(json.dumps(doc, indent=2) + "\n")
        if a.check:
            want = json.loads(a.check.read_text())
            bad = [t for t in a.tasks if want["sha256"].get(t) != hashes[t]]
            for t in a.tasks:
                print(f"{t:18} {'same' if t not in bad else 'DIFFERENT'}")
            return 1 if bad else 0
        print(json.dumps(doc, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
