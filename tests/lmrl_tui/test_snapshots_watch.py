"""Snapshot of the play screen while watching an agent: the value overlay (fixed numbers, drawn
as the overlay draws any explanation) and the taken-over status."""

from __future__ import annotations

from types import SimpleNamespace

import envs
from lmrl_tui.app import make_app
from lmrl_tui.views.overlay import ValueOverlay


def fixed_explanation() -> SimpleNamespace:
    rows = [
        ("move right\n", -2.75, 0.52, 0.31),
        ("move down\n", -2.86, 0.41, 0.52),
        ("move up\n", -3.10, 0.17, 0.12),
        ("move left\n", -3.27, 0.0, 0.05),
    ]
    v = -3.27
    cands = [
        SimpleNamespace(action=a, q=q, v=v, advantage=adv, prob=p, beta_prob=p)
        for a, q, adv, p in rows
    ]
    return SimpleNamespace(
        algo="ilql",
        kind="value",
        candidates=cands,
        rl_choice="move right\n",
        bc_choice="move down\n",
        state_value=v,
        source="legal actions",
        total=4,
    )


def test_watch_screen_with_the_value_overlay_taken_over(snap_compare, tmp_path):
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        screen = app.start_session("maze-fo", envs.make_policy("maze-fo", "optimal"), None, 2, None)
        await pilot.pause()
        await pilot.press("space")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("v", "t")  # a scripted agent has no values: draw fixed ones instead
        await pilot.pause()
        screen.query_one("#overlay", ValueOverlay).show_explanation(fixed_explanation(), 1)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)
