"""A checkpoint agent generates at most its task's longest action (chess: 14 tokens, not 32)."""

from __future__ import annotations

import chess
from support.checkpoint_support import tiny_checkpoint

import envs
from envs.chess.text import action_text
from envs.maze.engine import ACTIONS
from training.agents.checkpoint_agent import load_agent
from training.config import action_token_limit


def test_short_action_tasks_bound_generation_and_the_others_keep_32():
    assert action_token_limit("chess") == action_token_limit("endgames") == 14
    assert action_token_limit("maze-fo") == action_token_limit("maze-po") == 11
    assert action_token_limit("wordle") == action_token_limit("wordle-lmrl") == 10
    assert action_token_limit("twenty-questions") == action_token_limit("car-dealer") == 32
    assert action_token_limit("not-a-task") == 32


def test_every_action_of_a_bounded_task_fits_its_bound():
    # the longest SAN moves (a capturing promotion with check; a doubly disambiguated capture)
    board = chess.Board("3r3k/4P3/8/8/8/8/8/K7 w - - 0 1")
    promotions = [action_text(board.san(m)) for m in board.legal_moves]
    queens = chess.Board("8/k7/8/8/4Q2Q/8/8/K3n2Q w - - 0 1")
    captures = [action_text(queens.san(m)) for m in queens.legal_moves]
    assert "e x d 8 = Q +\n" in promotions and "Q h 4 x e 1\n" in captures
    for text in promotions + captures:
        assert len(text.encode()) <= envs.spec("chess").max_action_bytes
    assert max(len(a.encode()) for a in ACTIONS) == envs.spec("maze-fo").max_action_bytes
    task = envs.make("wordle")
    assert {len(a.encode()) for a in task.legal_actions()} == {task.spec.max_action_bytes}


def test_load_agent_takes_the_task_bound_unless_told(tmp_path):
    path = tiny_checkpoint(tmp_path, "bc")
    assert (
        load_agent(path, decoding="sample").decoder.max_new_tokens == 11
    )  # maze-fo's "move right\n"
    assert load_agent(path, decoding="sample", max_new_tokens=20).decoder.max_new_tokens == 20


def test_online_rollouts_generate_up_to_the_task_bound():
    from training.online.config import OnlineConfig, resolve_online

    def bound(task: str, **kw) -> int:
        return resolve_online(OnlineConfig(algo="ppo", task=task, **kw), set(kw)).max_new_tokens

    assert (
        bound("chess") == bound("endgames") == 14
    )  # at 8, "e x d 8 = Q +" (10 BPE tokens) was cut
    assert bound("maze-fo") == 11 and bound("wordle") == 12  # wordle's own tuned default
    assert bound("twenty-questions") == 16 and bound("chess", max_new_tokens=5) == 5


def test_wordle_lmrl_takes_wordles_online_defaults_unless_told():
    """LMRL's feedback rule changes the clues, not the guesses or the returns: the lr, reward scale
    and value warm-up measured on Wordle apply (before, wordle-lmrl ran at the generic lr 1e-4,
    which degraded Wordle's BC policy)."""
    from training.online.config import OnlineConfig, resolve_online

    got = resolve_online(OnlineConfig(algo="online-filtered-bc", task="wordle-lmrl"))
    assert (got.lr, got.reward_scale, got.n_rollouts, got.max_new_tokens) == (2e-5, 0.1, 256, 12)
    assert resolve_online(OnlineConfig(algo="ppo", task="wordle-lmrl", lr=1e-4), {"lr"}).lr == 1e-4
