"""Online filtered BC on the toy bandit (docs/algorithms.md §6, T11): it improves every round,
keeps the top of the round or of everything so far, and reloads its pool on resume."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from support.online_bandit import bandit_config, p_a  # noqa: E402

from data.store import Store  # noqa: E402
from training.online.loop import OnlineTrainer  # noqa: E402


def test_t11_online_filtered_bc_improves_each_round(bandit_init, tmp_path):
    store = Store(tmp_path / "s.db")
    tr = OnlineTrainer(
        bandit_config(bandit_init, algo="online-filtered-bc", rounds=1, lr=3e-3, epochs=2),
        store,
        tmp_path / "run",
    )
    probs = [p_a(tr)]
    for r in range(1, 4):
        tr.cfg.rounds = r
        tr.run()
        probs.append(p_a(tr))
    assert all(b > a for a, b in zip(probs, probs[1:], strict=False)), probs
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["kept"] for r in rows] == [int(64 * 0.3)] * 3
    assert all(r["pool"] == 64 for r in rows)


def test_t11_accumulate_keeps_top_of_everything(bandit_init, tmp_path):
    tr = OnlineTrainer(
        bandit_config(
            bandit_init,
            algo="online-filtered-bc",
            rounds=2,
            accumulate=True,
            filter="percent",
            keep=0.1,
        ),
        None,
        tmp_path / "run",
    )
    tr.run()
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["pool"] for r in rows] == [64, 128]
    assert all(r["kept_min_return"] == 1.0 for r in rows)  # ties at the top (return 1) all kept


def test_resume_of_accumulating_filtered_bc_reloads_the_pool(bandit_init, tmp_path):
    store = Store(tmp_path / "s.db")
    kw = dict(algo="online-filtered-bc", accumulate=True, n_rollouts=16, save_every=1)
    OnlineTrainer(bandit_config(bandit_init, rounds=1, **kw), store, tmp_path / "run").run()
    tr = OnlineTrainer(
        bandit_config(bandit_init, rounds=2, **kw), store, tmp_path / "run", resume=True
    )
    tr.run()
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["pool"] for r in rows] == [16, 32]
