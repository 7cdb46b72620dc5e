"""LMRL-Gym's chess formats, for both ``chess`` and ``endgames``.

* Games (``lmrl`` export/import; LMRL's ``train_trajectories.jsonl`` / endgames ``train.jsonl``,
  read by its ILQL and MC trainers): one game per line, a JSON list of
  ``{"state", "action", "reward", "done"}``, where ``state`` is the model's observation before the
  move (the spaced FEN) and ``action`` the move as the model wrote it (``"N f 3\\n"``). Import also
  accepts raw FENs and plain SAN (``"Nf3"``) and converts them to the model texts.
* BC pairs (:func:`bc_pairs`, :func:`export_bc`; LMRL's ``train_bc.jsonl``): one legal agent move
  per line, ``{"from_state": "<FEN>", "action": "<SAN>"}`` with the plain FEN and SAN (LMRL's BC
  trainer spaces them itself). Illegal attempts are left out.
"""

from __future__ import annotations

import json
from typing import IO, Any

import chess

import envs
from data.datasets import DatasetQuery, StoredEpisode, load_episodes, select_episode_ids
from data.io import validation as check
from data.io.formats import Codec, register_codec, state_action_steps
from data.store import EpisodeRecord, StepRecord, Who
from envs.chess.text import action_text, observation_text, parse_model_action, spaced


def unspace_fen(state: str) -> str:
    """The plain FEN from LMRL's spaced FEN (``"r n b / ..."``); plain FENs pass through."""
    if " / " not in state and "/" in state:
        return state.strip()
    return state.replace("   ", "\x00").replace(" ", "").replace("\x00", " ").strip()


def to_observation(state: str) -> str:
    """The model's observation text for a stored ``state`` (plain or spaced FEN)."""
    return spaced(chess.Board(unspace_fen(state)).fen())


def to_action(action: str) -> str:
    """A dataset action as model text: plain SAN is spaced; model text is kept as written."""
    if " " in action or action.endswith("\n"):
        return action
    return action_text(action)


def export_game(ep: StoredEpisode) -> list[dict[str, Any]]:
    return state_action_steps(ep)


def _final_observation(state: str, action: str, reward: float) -> tuple[str, bool]:
    """The observation after a game's last step and whether the game ended there (else truncated).

    LMRL's files do not keep it: a mate or draw by the agent's move is rebuilt; an ending by the
    opponent's reply is rebuilt when exactly one reply ends the game that way (else "").
    """
    board = chess.Board(unspace_fen(state))
    move = parse_model_action(board, action)
    if move is None:
        return observation_text(board), False
    board.push(move)
    if board.is_game_over():
        return observation_text(board), True
    endings = []
    for reply in board.legal_moves:
        board.push(reply)
        if board.is_game_over() and board.is_checkmate() == (reward < 0):
            endings.append(observation_text(board))
        board.pop()
    if not endings:
        return "", False
    return (endings[0] if len(endings) == 1 else ""), True


def import_game(item: Any, task: str) -> EpisodeRecord:
    if isinstance(item, dict) and "from_state" in item:
        raise ValueError("this is a BC pair ({from_state, action}), not a game; import games")
    if type(item) is not list or not item:
        check.fail("the item", "a non-empty list of {state, action, reward, done} steps", item)
    rows = [
        check.fields(st, f"[{i}]", ("state", "action", "reward", "done"))
        for i, st in enumerate(item)
    ]
    states = [check.text(row[0], f"[{i}].state") for i, row in enumerate(rows)]
    steps = []
    for i, (_, action, reward, done) in enumerate(rows):
        action = to_action(check.text(action, f"[{i}].action"))
        reward = check.number(reward, f"[{i}].reward")
        done = check.flag(done, f"[{i}].done")
        if i + 1 < len(rows):
            obs = to_observation(states[i + 1])
            over = done and chess.Board(unspace_fen(obs)).is_game_over()
        else:
            obs, over = _final_observation(states[i], action, reward)
            over = over and done
        steps.append(StepRecord(action, obs, reward, terminated=over, truncated=done and not over))
    last = steps[-1]
    return EpisodeRecord(
        task=task,
        task_version=envs.spec(task).version,
        seed=None,
        first_observation=to_observation(states[0]),
        steps=steps,
        agent=Who("import", "lmrl"),
        partner=Who("stockfish", "stockfish"),
        source="import",
        success=last.terminated and last.reward > 0,
    )


def bc_pairs(ep: StoredEpisode) -> list[dict[str, str]]:
    """The episode's legal agent moves as LMRL BC pairs ``{"from_state": FEN, "action": SAN}``."""
    out = []
    states = [ep.episode["first_observation"]] + [s["observation"] for s in ep.steps]
    for i, s in enumerate(ep.steps):
        if not states[i]:
            continue
        board = chess.Board(unspace_fen(states[i]))
        move = parse_model_action(board, s["action"])
        if move is not None:
            out.append({"from_state": board.fen(), "action": board.san(move)})
    return out


def export_bc(store: Any, out: IO[str], query: DatasetQuery) -> int:
    """Write the BC pairs of the episodes ``query`` selects to ``out``; returns pairs written."""
    n = 0
    for ep in load_episodes(store, select_episode_ids(store, query)):
        for pair in bc_pairs(ep):
            out.write(json.dumps(pair) + "\n")
            n += 1
    return n


register_codec("chess", Codec(export_game, import_game))
register_codec("endgames", Codec(export_game, import_game))
