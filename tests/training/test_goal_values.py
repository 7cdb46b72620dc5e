"""experiments/goal_values.py: what a question task's dialogue predicts of its outcome (finer bins
never predict worse in-sample), and a goal value checkpoint's predictions on held-out episodes."""

from __future__ import annotations

import pytest
from support.checkpoint_support import tiny_goal_checkpoint
from support.experiment_support import experiment_script

from data.generate import generate
from data.store import Store
from envs.players.agents import make_agent


def _script():
    return experiment_script("goal_values")


def test_the_bounds_narrow_as_the_bins_see_more_of_the_dialogue(tmp_path, capsys):
    script = _script()
    store = Store(tmp_path / "gc.db")
    generate(store, "guess-city", make_agent("guess-city", "behaviour"), 40, seed=100)
    rows = script.step_features("guess-city", store)
    assert len(rows) == sum(e["n_steps"] for e in store.recent_episodes(100))
    found = [y for _, y in rows]
    assert set(found) <= {0.0, 1.0} and 0 < sum(found) < len(found)
    first = [f for f, _ in rows if f[0] == 0]
    assert all(f[1] == 12 for f in first)  # nothing asked yet: every city (capped) possible
    assert any(f[1] < 12 for f, _ in rows)  # the answers narrow them down
    keys = [lambda f: 0, lambda f: f[0], lambda f: f[:2], lambda f: f]
    losses = [script.binned_loss(rows, k) for k in keys]
    assert losses == sorted(losses, reverse=True) and losses[0] <= 0.125
    rate = sum(found) / len(found)
    assert losses[0] == pytest.approx(0.5 * rate * (1 - rate))
    assert script.main(["guess-city", str(tmp_path / "gc.db")]) == 0
    out = capsys.readouterr().out
    assert "loss_rate_per_step_candidates_guess" in out and "loss_constant_half 0.1250" in out


def test_a_checkpoints_predictions_are_reported_per_goal(tmp_path, capsys):
    script = _script()
    ck = tiny_goal_checkpoint(tmp_path, task="guess-city", episodes=6)
    held = tmp_path / "held.db"
    store = Store(held)
    generate(store, "guess-city", make_agent("guess-city", "behaviour"), 3, seed=0)
    store.close()
    figures = script.checkpoint_figures("guess-city", str(ck.parent), Store(held))
    assert set(figures) == {
        "values_loss_held_out",
        "values_q_mean_found",
        "values_q_spread_found",
        "values_q_mean_not_found",
        "values_q_spread_not_found",
    }
    assert 0.0 <= figures["values_loss_held_out"] <= 0.5
