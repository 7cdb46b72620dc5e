"""LMRL-Gym's chess formats: game-per-line export/import (both tasks) and BC pairs."""

from __future__ import annotations

import io
import json

import chess

import envs
from data.datasets import DatasetQuery, load_episodes, select_episode_ids
from data.io.codecs.chess import bc_pairs, export_bc, import_game, to_observation, unspace_fen
from data.io.formats import export_episodes, import_episodes
from data.store import EpisodeRecord, StepRecord, Who
from envs.chess.task import ChessTask


def record(task: str, seed: int, actions: list[str] | None = None, **reset_opts) -> EpisodeRecord:
    """A random-vs-random game (no engine), optionally starting with scripted actions."""
    t = ChessTask(task, opponent="random")
    first = t.reset(seed, reset_opts or None)
    agent = envs.make_policy(task, "random")
    agent.reset(t, seed)
    steps = []
    queue = list(actions or [])
    while True:
        a = queue.pop(0) if queue else agent.act(t.history())
        st = t.step(a)
        steps.append(
            StepRecord(a, st.observation, st.reward, st.terminated, st.truncated, dict(st.info))
        )
        if st.terminated or st.truncated:
            break
    return EpisodeRecord(
        task, 1, seed, first, steps, Who("random", "random"), success=steps[-1].reward > 0
    )


def test_spaced_fen_round_trip() -> None:
    fen = chess.STARTING_FEN
    spaced = to_observation(fen)
    assert spaced.startswith("r n b q k b n r / ") and "   w   K Q k q   -   0   1" in spaced
    assert (
        unspace_fen(spaced) == fen and unspace_fen(fen) == fen and to_observation(spaced) == spaced
    )


def test_export_is_a_list_of_lmrl_steps(store) -> None:
    store.write_episodes([record("chess", 1, ["K e 3\n", "e 4\n"])])
    out = io.StringIO()
    assert export_episodes(store, out, "lmrl", DatasetQuery(task="chess")) == 1
    game = json.loads(out.getvalue())
    assert isinstance(game, list) and set(game[0]) == {"state", "action", "reward", "done"}
    assert game[0]["state"] == to_observation(chess.STARTING_FEN)
    assert (
        game[0]["action"] == "K e 3\n"
        and game[0]["reward"] == -1
        and game[1]["state"] == game[0]["state"]
    )
    assert game[1]["action"] == "e 4\n" and game[2]["state"].split("   ")[1] == "w"
    assert [s["done"] for s in game] == [False] * (len(game) - 1) + [True]


def test_round_trip_through_the_store_for_both_tasks(tmp_path, store) -> None:
    for task in ("chess", "endgames"):
        store.write_episodes([record(task, s) for s in range(6)])
        a, b = tmp_path / f"{task}-a.jsonl", tmp_path / f"{task}-b.jsonl"
        with a.open("w") as f:
            n = export_episodes(store, f, "lmrl", DatasetQuery(task=task))
        assert n == 6
        from data.store import Store

        other = Store(tmp_path / f"{task}.db")
        assert import_episodes(other, a, "lmrl", task=task) == 6
        with b.open("w") as f:
            export_episodes(other, f, "lmrl", DatasetQuery(task=task))
        assert a.read_text() == b.read_text()
        orig = list(load_episodes(store, select_episode_ids(store, DatasetQuery(task=task))))
        back = list(load_episodes(other, select_episode_ids(other, DatasetQuery(task=task))))
        for x, y in zip(orig, back, strict=True):
            assert x.episode["first_observation"] == y.episode["first_observation"]
            assert [(s["action"], s["reward"]) for s in x.steps] == [
                (s["action"], s["reward"]) for s in y.steps
            ]
            assert [s["observation"] for s in x.steps[:-1]] == [
                s["observation"] for s in y.steps[:-1]
            ]
            assert y.steps[-1]["observation"] in (
                "",
                x.steps[-1]["observation"],
            )  # not in LMRL's files
            assert [bool(s["terminated"]) for s in x.steps] == [
                bool(s["terminated"]) for s in y.steps
            ]
        other.close()


def test_import_accepts_plain_fen_and_san_and_rebuilds_the_final_position() -> None:
    fen = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"
    rec = import_game(
        [
            {"state": fen, "action": "Kf1", "reward": 0, "done": False},
            {
                "state": "6k1/5ppp/8/8/8/8/8/R4K2 w - - 2 2",
                "action": "Ra8#",
                "reward": 1,
                "done": True,
            },
        ],
        "endgames",
    )
    assert rec.first_observation == to_observation(fen) and rec.steps[0].action == "K f 1\n"
    assert rec.steps[1].action == "R a 8 #\n" and rec.steps[1].terminated and rec.success
    assert unspace_fen(rec.steps[1].observation).startswith("R5k1/5ppp/8/8/8/8/8/5K2 b")
    lost = import_game(
        [
            {
                "state": "rnbqkbnr/pppp1ppp/8/4p3/8/5P2/PPPPP1PP/RNBQKBNR w KQkq - 0 2",
                "action": "g 4\n",
                "reward": -1,
                "done": True,
            }
        ],
        "chess",
    )
    assert lost.steps[0].terminated and "q" in lost.steps[0].observation and not lost.success
    cut = import_game([{"state": fen, "action": "K f 1\n", "reward": 0, "done": True}], "chess")
    assert cut.steps[0].truncated and not cut.steps[0].terminated


def test_bc_pairs_skip_illegal_attempts(store) -> None:
    store.write_episodes([record("chess", 2, ["x\n", "N f 3\n", "e 2 e 4\n"])])
    out = io.StringIO()
    n = export_bc(store, out, DatasetQuery(task="chess"))
    pairs = [json.loads(line) for line in out.getvalue().splitlines()]
    assert n == len(pairs) and pairs[0] == {"from_state": chess.STARTING_FEN, "action": "Nf3"}
    assert (
        pairs[1]["action"] == "e4"
        and "/" in pairs[1]["from_state"]
        and " / " not in pairs[1]["from_state"]
    )
    ep = next(iter(load_episodes(store, select_episode_ids(store, DatasetQuery(task="chess")))))
    assert bc_pairs(ep) == pairs


def test_cli_exports_bc_pairs(store, tmp_path, capsys) -> None:
    from lmrl_tui.cli import main

    store.write_episodes([record("chess", 2, ["N f 3\n", "e 2 e 4\n"])])
    out = tmp_path / "pairs.jsonl"
    assert (
        main(
            [
                "--db",
                str(store.path),
                "export",
                "--task",
                "chess",
                "--format",
                "lmrl-bc",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    pairs = [json.loads(line) for line in out.read_text().splitlines()]
    assert pairs[0] == {"from_state": chess.STARTING_FEN, "action": "Nf3"}
    assert f"exported {len(pairs)} move pairs" in capsys.readouterr().err
    assert (
        main(["--db", str(store.path), "export", "--task", "maze-fo", "--format", "lmrl-bc"]) == 1
    )
    assert "give --task chess" in capsys.readouterr().err
