"""The GPU benchmark runs (tiny sizes) on CPU without crashing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_bench_gpu_cpu_smoke():
    pytest.importorskip("torch")
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_gpu.py"), "--cpu-smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    names = {line.split()[0] for line in out.splitlines() if line.strip()}
    for algo in ("bc", "ilql", "ppo"):
        assert f"{algo}_tokens_per_s" in names
