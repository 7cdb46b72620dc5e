"""A checkpoint agent generates at most its task's longest action (chess: 8 tokens, not 32)."""

from __future__ import annotations

import chess

from tests.checkpoint_support import tiny_checkpoint
from training.agent import action_token_limit, load_agent


def test_short_action_tasks_bound_generation_and_the_others_keep_32():
    assert action_token_limit("chess") == action_token_limit("endgames") == 8
    assert action_token_limit("maze-fo") == 8
    assert action_token_limit("twenty-questions") == action_token_limit("car-dealer") == 32
    assert action_token_limit("not-a-task") == 32
    # the longest SAN move (a capturing promotion with check) and its end fit in the bound
    board = chess.Board("3r3k/4P3/8/8/8/8/8/K7 w - - 0 1")
    longest = max(len(board.san(m)) for m in board.legal_moves)
    assert longest == len("exd8=Q+") and longest + 1 <= action_token_limit("chess")


def test_load_agent_takes_the_task_bound_unless_told(tmp_path):
    path = tiny_checkpoint(tmp_path, "bc")
    assert load_agent(path, decoding="sample").decoder.max_new_tokens == 8  # maze-fo
    assert load_agent(path, decoding="sample", max_new_tokens=20).decoder.max_new_tokens == 20
