"""A checkpoint chosen in the new-episode dialog with decoding flags after its folder
(``runs/mc --decoding rerank --no-repeat``): the loader gets them; a bad flag is the field's
one-line message, and nothing is played or stored."""

from __future__ import annotations

import envs
from envs.players.agents import _LOADERS
from lmrl_tui.app import make_app
from lmrl_tui.screens.dialogs import NewEpisodeDialog
from lmrl_tui.screens.play import PlayScreen


async def settle(app, pilot) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def test_the_dialog_passes_the_flags_and_refuses_bad_ones(store, tmp_path, monkeypatch):
    calls = []

    def loader(path, **kw):  # a registered loader runs in the app's process
        calls.append((path, kw))
        agent = envs.make_policy("maze-fo", "optimal")
        agent.kind = "checkpoint"
        return agent

    monkeypatch.setitem(_LOADERS, "checkpoint", loader)
    folder = tmp_path / "ck"
    folder.mkdir()
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 44)) as pilot:
        app.new_episode("maze-fo", seed=3, checkpoint=f"{folder} --decoding beam")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, NewEpisodeDialog)
        dialog.query_one("#start").press()
        await settle(app, pilot)
        assert app.screen is dialog and not calls
        shown = str(dialog.query_one("#checkpoint-error").content)
        assert "--decoding is one of sample, greedy, rerank, rerank_sample, not 'beam'" in shown
        assert "Traceback" not in shown
        dialog.query_one("#checkpoint").value = f"{folder} --decoding greedy --temperature 0.5"
        dialog.query_one("#start").press()
        await settle(app, pilot)
        assert isinstance(app.screen, PlayScreen)
        assert calls == [
            (str(folder), {"task": "maze-fo", "decoding": "greedy", "temperature": 0.5})
        ]
    assert store.count() == 1
