"""Snapshots of the annotators screen and the name prompt (pytest-textual-snapshot)."""

from __future__ import annotations

from support.annotator_lab import build_lab

from data.store import Store
from lmrl_tui.app import make_app


def test_annotators_screen(snap_compare, tmp_path):
    with Store(tmp_path / "snap.db") as store:
        build_lab(store)
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        await app.workers.wait_for_complete()
        await pilot.press("a")
        await app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 24), run_before=run_before)


def test_name_prompt(snap_compare, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the home screen under the prompt shows the store's path
    app = make_app("snap.db", ask_player=True)

    async def run_before(pilot):
        await app.workers.wait_for_complete()
        await pilot.press("enter")  # an empty name: refused, with the reason under the field
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 24), run_before=run_before)
