"""Write the README's screenshots: the app's home screen and a maze being played, as SVG.

    python scripts/screenshot.py                 # docs/images/home.svg and docs/images/maze.svg
    python scripts/screenshot.py --out DIR       # somewhere else (the test writes to a temp dir)

The app runs headless (Textual's ``App.run_test``) on a fresh store in a temporary folder, with a
few scripted episodes in it so the home screen has counts to show; nothing of the user's store or
remembered choices is read or written. ``tests/test_screenshot.py`` runs it again and checks that
the files are well-formed SVG that show the app.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZE = (110, 30)  # columns, rows: wide enough for the task table, short enough for a README
TITLE = "lmrl-tui"


async def take(out: Path) -> list[Path]:
    """Run the app headless in the current folder and write the screenshots into ``out``."""
    import envs
    from data.generate import generate
    from data.store import Store
    from lmrl_tui.app import make_app

    store = Store("episodes.db")  # relative: the screenshot shows no path of this machine
    generate(store, "maze-fo", envs.make_policy("maze-fo", "behaviour"), 20, seed=0)
    generate(store, "wordle", envs.make_policy("wordle", "strong"), 5, seed=0)
    written = []
    app = make_app(store, player="newcomer")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        written.append(save(app, out / "home.svg", f"{TITLE}: the home screen"))
        app.start_session("maze-fo", None, None, 2, "newcomer")
        await settle(app, pilot)
        for key in ("right", "right", "right"):
            await pilot.press(key)
        await settle(app, pilot)
        written.append(save(app, out / "maze.svg", f"{TITLE}: playing maze-fo"))
    store.close()
    return written


async def settle(app, pilot) -> None:
    for _ in range(3):
        await pilot.pause(0.1)
        await app.workers.wait_for_complete()
    await pilot.pause(0.1)


def save(app, path: Path, title: str) -> Path:
    path.write_text(app.export_screenshot(title=title), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="folder")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT))
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["LMRL_CONFIG_DIR"] = str(Path(tmp) / "config")  # no remembered choices
        os.chdir(tmp)
        try:
            written = asyncio.run(take(out))
        finally:
            os.chdir(here)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
