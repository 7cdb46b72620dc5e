"""Layering: envs and data never import textual or torch; the app's home screen never imports torch."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest

HEAVY = ("torch", "transformers", "accelerate")
HTTP = ("httpx", "httpcore")
"""Imported by a model endpoint agent on its first call only."""


def modules_after(code: str) -> set[str]:
    probe = textwrap.dedent(code) + "\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    import json

    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("pkg", ["envs", "data"])
def test_pure_layers(pkg):
    mods = modules_after(
        f"import {pkg}\nimport envs\nenvs.ids()\nimport data.io.formats\ndata.io.formats.codec('maze-fo')"
    )
    bad = {m.split(".")[0] for m in mods} & {"textual", *HEAVY, *HTTP, "lmrl_tui", "training"}
    assert not bad, f"{pkg} pulled in {bad}"


def test_home_screen_opens_without_torch(tmp_path):
    mods = modules_after(
        f"""
        import asyncio
        from lmrl_tui.cli import build_parser
        build_parser()
        from lmrl_tui.app import make_app
        from lmrl_tui.screens.home import HomeScreen

        async def main():
            app = make_app({str(tmp_path / "e.db")!r})
            async with app.run_test() as pilot:
                await pilot.pause()
                assert isinstance(app.screen, HomeScreen)
        asyncio.run(main())
        """
    )
    assert not {m.split(".")[0] for m in mods} & {*HEAVY, *HTTP}


def test_a_plain_lmrl_starts_the_app_without_building_the_command_tree(tmp_path):
    """``lmrl`` (and ``lmrl --db F --player P``) goes straight to the app: the other commands'
    argument code (training, serving) costs 50–110 ms of the start and is not imported."""
    mods = modules_after(
        f"""
        import lmrl_tui.cli as cli
        import lmrl_tui.cli.play as play
        seen = []
        play.run_app = lambda args, store: seen.append((args.db, args.player, args.command)) or 0
        assert cli.main(["--db", {str(tmp_path / "e.db")!r}, "--player", "ann"]) == 0
        assert seen == [({str(tmp_path / "e.db")!r}, "ann", None)], seen
        """
    )
    assert not {"training.algorithms", "training.args", "lmrl_tui.cli.serve"} & mods
    again = modules_after(
        "import lmrl_tui.cli as cli\nimport lmrl_tui.cli.stats as stats\n"
        "stats.run_tasks = lambda a, s: 0\nassert cli.main(['tasks']) == 0"
    )
    assert "training.algorithms" in again  # any subcommand: the whole tree, as before


def test_the_home_screen_reads_an_existing_store_without_sqlite_utils(tmp_path):
    """Opening an up-to-date store, filling the home screen's counts and looking for unfinished
    episodes use the plain sqlite3 connection: importing sqlite-utils (and its click, pluggy and
    dateutil) cost ~0.1 s beside the first frame. Creating or migrating a store still uses it."""
    import envs
    from data.generate import generate
    from data.store import Store

    store = Store(tmp_path / "e.db")
    generate(store, "maze-fo", envs.make_policy("maze-fo", "behaviour"), 1)
    store.close()
    mods = modules_after(
        f"""
        import asyncio
        from lmrl_tui.app import make_app
        from lmrl_tui.screens.home import HomeScreen

        async def main():
            app = make_app({str(tmp_path / "e.db")!r})
            async with app.run_test() as pilot:
                while not (isinstance(app.screen, HomeScreen) and app.screen.counts):
                    await pilot.pause(0.01)
                await app.workers.wait_for_complete()
                assert app.screen.counts["maze-fo"].total == 1
        asyncio.run(main())
        """
    )
    assert "data.store" in mods and "sqlite_utils" not in mods


def test_an_endpoint_agent_imports_httpx_only_on_its_first_call():
    mods = modules_after(
        "from envs.players.agents import make_agent\n"
        "make_agent('twenty-questions', 'http:m@http://127.0.0.1:9/v1', role='oracle')"
    )
    assert not {m.split(".")[0] for m in mods} & set(HTTP)


@pytest.mark.skipif(
    shutil.which("lint-imports") is None
    and not shutil.which(
        "lint-imports", path=str(__import__("pathlib").Path(sys.executable).parent)
    ),
    reason="import-linter not installed",
)
def test_import_linter_contracts():
    from pathlib import Path

    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([exe], cwd=root, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
