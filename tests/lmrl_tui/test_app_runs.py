"""The training-runs screen: runs from the store, metrics tailed from the run folder, watch a checkpoint."""

from __future__ import annotations

import json

from data import runs
from lmrl_tui.app import make_app
from lmrl_tui.screens.dialogs import NewEpisodeDialog
from lmrl_tui.screens.runs import RunsScreen, read_metrics_tail


def add_run(store, out_dir) -> int:
    run_id = runs.start_run(store, kind="train", algo="bc", task="maze-fo", config={}, dataset_query=None,
                            episode_ids=None, out_dir=str(out_dir))  # fmt: skip
    runs.add_checkpoint(store, run_id, str(out_dir / "checkpoint"), 40, {})
    runs.finish_run(store, run_id, "finished", {})
    return run_id


async def test_runs_screen_tails_metrics_and_offers_watch(store, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    rows = [{"kind": "train", "step": i, "loss": 1.0 / (i + 1)} for i in range(5)]
    (out / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + "{broken\n")
    add_run(store, out)
    app = make_app(store)
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("t")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        assert screen.run is not None and screen.run["algo"] == "bc"
        lines = screen.query_one("#metrics").lines
        assert len(lines) == 5 and "step=4" in lines[-1] and "loss=0.2" in lines[-1]
        with (out / "metrics.jsonl").open("a") as f:
            f.write(json.dumps({"kind": "eval", "step": 5, "normalised": 61.5}) + "\n")
        await pilot.pause(2.3)  # the screen re-reads the file every 2 s
        assert "normalised=61.5" in screen.query_one("#metrics").lines[-1]
        await pilot.press("w")
        await pilot.pause()
        assert isinstance(app.screen, NewEpisodeDialog)
        assert app.screen.query_one("#checkpoint").value == str(out / "checkpoint")


def test_read_metrics_tail_handles_missing_and_junk(tmp_path):
    assert read_metrics_tail(tmp_path / "none.jsonl") == []
    p = tmp_path / "m.jsonl"
    p.write_text('[1, 2]\n{"a": 1}\nnot json\n')
    assert read_metrics_tail(p) == [{"a": 1}]
