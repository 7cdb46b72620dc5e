"""Chess/endgames throughput against the real Stockfish (default opponent: Elo 1200 -> 1350).

Prints one figure per line as ``name value unit``:

* agent moves per second in full games (behaviour and random agents vs the default opponent);
* endgames episodes per second when generating with the behaviour policy (what
  ``lmrl generate endgames`` does), on the test set and on fresh random positions;
* the engine start-up time (one process per game).

Usage: ``python bench/bench_chess.py [--games 10] [--episodes 40]``
"""

from __future__ import annotations

import argparse
import time

import chess.engine

import envs
from envs.chess.stockfish import find_stockfish


def moves_per_second(task_id: str, policy: str, games: int) -> float:
    task = envs.make(task_id)
    moves, t0 = 0, time.perf_counter()
    for seed in range(games):
        ep = envs.run_episode(task, envs.make_policy(task_id, policy), seed)
        moves += len(ep.transitions)
    return moves / (time.perf_counter() - t0)


def episodes_per_second(task_id: str, policy: str, episodes: int, **options: object) -> float:
    task = envs.make(task_id, **options)
    t0 = time.perf_counter()
    for seed in range(episodes):
        envs.run_episode(task, envs.make_policy(task_id, policy), seed)
    task.close()
    return episodes / (time.perf_counter() - t0)


def engine_startup_ms(n: int = 5) -> float:
    path = find_stockfish()
    t0 = time.perf_counter()
    for _ in range(n):
        eng = chess.engine.SimpleEngine.popen_uci(path)
        eng.quit()
    return (time.perf_counter() - t0) / n * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description="chess/endgames throughput")
    ap.add_argument("--games", type=int, default=10, help="full chess games per agent")
    ap.add_argument("--episodes", type=int, default=40, help="endgames episodes per measurement")
    args = ap.parse_args()
    print(f"engine_startup {engine_startup_ms():.0f} ms")
    print(
        f"chess_behaviour_agent_moves {moves_per_second('chess', 'behaviour', args.games):.1f} moves/s"
    )
    print(f"chess_random_agent_moves {moves_per_second('chess', 'random', args.games):.1f} moves/s")
    print(
        f"endgames_behaviour_generation {episodes_per_second('endgames', 'behaviour', args.episodes):.2f} episodes/s"
    )
    rate = episodes_per_second("endgames", "behaviour", args.episodes, positions="random")
    print(f"endgames_behaviour_generation_random_positions {rate:.2f} episodes/s")
    print(
        f"endgames_strong {episodes_per_second('endgames', 'strong', args.episodes):.2f} episodes/s"
    )


if __name__ == "__main__":
    main()
