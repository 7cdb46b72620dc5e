"""experiments/endgame_positions.py: one game from each FEN of a positions file, counted by how it
ended."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.experiment_support import experiment_script

from envs.chess.stockfish import find_stockfish

try:
    find_stockfish()
except Exception:  # noqa: BLE001 - whatever the reason, no engine: nothing to play against
    pytest.skip("needs Stockfish (apt-get install stockfish)", allow_module_level=True)

MATE_IN_ONE = "7k/8/6K1/8/8/8/8/1Q6 w - - 0 1"  # Qb8#
HANGS_THE_QUEEN = "k7/8/8/8/8/8/8/1Q2K3 w - - 0 1"  # Qb7+?? Kxb7 (forced): insufficient material


class Scripted:
    """Plays the SAN move given for each start position, then its first legal move."""

    kind, name = "scripted", "test"

    def __init__(self, first: dict[str, str]) -> None:
        self.first, self.task, self.moved = first, None, False

    def reset(self, task, seed=None) -> None:
        self.task, self.moved = task, False

    def act(self, history) -> str:
        if not self.moved:
            self.moved = True
            return self.first[self.task.board.fen()]
        return self.task.legal_actions()[0]


def test_wins_and_endings_are_counted_per_position():
    script = experiment_script("endgame_positions")
    agent = Scripted({MATE_IN_ONE: "Qb8#", HANGS_THE_QUEEN: "Qb7+"})
    got = script.play([MATE_IN_ONE, HANGS_THE_QUEEN], agent)
    assert got["positions"] == 2 and got["wins"] == 1 and got["mean_return"] == 0.5
    assert got["ended"] == {"checkmate": 1, "insufficient material": 1}
    assert got["moves"] == 1.0


def test_the_command_line_reads_a_positions_file(tmp_path: Path, monkeypatch, capsys):
    script = experiment_script("endgame_positions")
    path = tmp_path / "positions.jsonl"
    path.write_text(json.dumps({"fen": MATE_IN_ONE}) + "\n\n")
    import training.agents.checkpoint_agent

    monkeypatch.setattr(
        training.agents.checkpoint_agent,
        "load_agent",
        lambda run, **kw: Scripted({MATE_IN_ONE: "Qb8#"}),
    )
    script.main([str(path), "runs/x", "--decoding", "rerank"])
    row = json.loads(capsys.readouterr().out.strip())
    assert row["run"] == "runs/x" and row["decoding"] == "rerank" and row["wins"] == 1
