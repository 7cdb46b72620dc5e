"""The README's screenshots: scripts/screenshot.py still makes well-formed SVG of the app's home
screen and of a maze being played, and the committed ones are well-formed and show the app."""

from __future__ import annotations

import importlib.util
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"


def load_script():
    spec = importlib.util.spec_from_file_location("screenshot", ROOT / "scripts" / "screenshot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shown_text(path: Path) -> str:
    """The SVG's text as a viewer draws it (it must parse: a broken file fails here)."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return "".join("".join(node.itertext()) for node in root.iter(f"{SVG}text")).replace(
        "\xa0", " "
    )


@pytest.mark.slow  # about 5 s: the app started headless, two screens drawn
async def test_the_script_draws_the_home_screen_and_a_maze(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the script's store and its relative path
    written = await load_script().take(tmp_path)
    assert [p.name for p in written] == ["home.svg", "maze.svg"]
    home = shown_text(tmp_path / "home.svg")
    assert "lmrl-tui" in home and "episodes.db" in home and str(tmp_path) not in home
    assert all(task in home for task in ("maze-fo", "Twenty Questions", "Car Dealer"))
    assert "20 / 20" in home  # the scripted episodes it stored
    maze = shown_text(tmp_path / "maze.svg")
    assert "playing maze-fo" in maze and "Turn: 3 / 100" in maze


def test_the_committed_screenshots_show_the_app():
    home = shown_text(ROOT / "docs" / "images" / "home.svg")
    assert "lmrl-tui" in home and "Pick a task" in home and "guesser vs oracle" in home
    assert "playing maze-fo" in shown_text(ROOT / "docs" / "images" / "maze.svg")
