"""How does a checkpoint end its endgames? Play one game (White, against the task's Stockfish) from
each position of a positions file, and count the wins and the way each game ended (checkmate,
fivefold repetition, insufficient material after a piece was given away, stalemate, 75-move rule).

A positions file is JSON lines with a ``fen`` each (or LMRL's JSON-quoted FENs), the format of
the shipped test set (``envs/chess/assets/endgames/positions.jsonl``; read by
:func:`envs.chess.data.load_positions`). ``scripts/make_endgames.py --seed S --out PATH``
makes a validation set with the test set's filter from other random positions, so a recipe can be
chosen without playing the test set.

Printed: one JSON line per checkpoint (``wins``, ``mean_return``, ``ended`` by termination,
``moves`` on average, ``seconds``).

``python experiments/endgame_positions.py POSITIONS.jsonl RUN [RUN ...] [--decoding rerank] [--logit-weight W]``
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import envs
from envs.chess.data import load_positions


def play(positions: list[str], agent, task_options: dict | None = None) -> dict:
    task = envs.make("endgames", **(task_options or {}))
    t0 = time.perf_counter()
    rets: list[float] = []
    moves: list[int] = []
    ended: Counter[str] = Counter()
    try:
        for i, fen in enumerate(positions):
            ep = envs.run_episode(task, agent, seed=i, options={"fen": fen})
            rets.append(ep.total_return)
            moves.append(len(ep.transitions))
            last = ep.transitions[-1].info if ep.transitions else {}
            ended[
                str(last.get("termination") or ("truncated" if ep.transitions else "no move"))
            ] += 1
    finally:
        task.close()
    n = max(len(rets), 1)
    return {
        "positions": len(rets),
        "wins": sum(r > 0.5 for r in rets),
        "mean_return": sum(rets) / n,
        "ended": dict(ended.most_common()),
        "moves": sum(moves) / n,
        "seconds": round(time.perf_counter() - t0, 1),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("positions", type=Path, help="JSON lines with a 'fen' each")
    ap.add_argument("runs", nargs="+", help="checkpoint folders (or run folders holding one)")
    ap.add_argument("--decoding", default=None, help="decoding (default: the checkpoint's)")
    ap.add_argument("--logit-weight", type=float, default=None)
    args = ap.parse_args(argv)
    from training.agents.checkpoint_agent import load_agent

    positions = [p["fen"] for p in load_positions(args.positions)]
    for run in args.runs:
        agent = load_agent(run, decoding=args.decoding, logit_weight=args.logit_weight)
        print(
            json.dumps({"run": run, "decoding": args.decoding, **play(positions, agent)}),
            flush=True,
        )


if __name__ == "__main__":
    main()
