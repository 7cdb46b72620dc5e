"""Generate the endgames test set shipped as ``envs/chess/assets/endgames/positions.jsonl``.

Like LMRL-Gym's ``tricky_test_positions.jsonl``: random positions of each setup (black king against
K+Q, K+R, K+Q+R, K+R+R; valid, White to move, not in check; ``envs.chess.data.random_endgame``) that are
not trivially won: Stockfish, searching each position to a fixed depth from a fresh state on one
thread, does not report a mate in fewer than 15 moves. Setups whose positions Stockfish almost
always solves quickly (K+Q+R) end up rare or absent, as in LMRL's filter.

The seed, depth, quota and attempt cap are fixed, so the output is reproducible with the same
Stockfish build (Debian's stockfish 15.1). With another ``--seed`` and ``--out`` it makes validation
or training positions of the same kind (for ``--option positions=PATH``); those never repeat a
position of the shipped test set or of the ``--exclude`` files. Usage::

    python scripts/make_endgames.py [--out PATH] [--seed 645] [--depth 14] [--per-setup 100]
        [--exclude PATH ...]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import chess

from envs.chess.data import (
    POSITIONS_FILE,
    SETUPS,
    endgame_positions,
    load_positions,
    random_endgame,
)
from envs.chess.stockfish import Engine, engine_info, find_stockfish

MIN_MATE = 15
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "envs" / "chess" / POSITIONS_FILE


def generate(
    seed: int, depth: int, per_setup: int, attempts: int, exclude: set[str] = frozenset()
) -> list[dict]:
    """Kept positions, setup by setup, in generation order; none of ``exclude`` (FENs)."""
    path = find_stockfish()
    kept: list[dict] = []
    seen: set[str] = set(exclude)
    with Engine(path) as engine:
        for setup in SETUPS:
            rng = random.Random(f"{seed}:{setup}")
            n_kept = 0
            for _ in range(attempts):
                if n_kept >= per_setup:
                    break
                fen = random_endgame(setup, rng)
                if fen in seen:
                    continue
                seen.add(fen)
                mate, cp = engine.mate_in(chess.Board(fen), depth)
                if mate is not None and 0 < mate < MIN_MATE:
                    continue
                kept.append(
                    {
                        "fen": fen,
                        "setup": setup,
                        "stockfish": f"mate {mate}" if mate else f"cp {cp}",
                    }
                )
                n_kept += 1
    return kept


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--seed", type=int, default=645)
    ap.add_argument("--depth", type=int, default=14, help="Stockfish search depth of the filter")
    ap.add_argument("--per-setup", type=int, default=100, help="positions kept per setup at most")
    ap.add_argument("--attempts", type=int, default=400, help="candidates tried per setup at most")
    ap.add_argument(
        "--exclude",
        type=Path,
        action="append",
        default=[],
        help="a positions file whose positions are not to be repeated (repeatable)",
    )
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    exclude: set[str] = set()
    if args.out.resolve() != DEFAULT_OUT.resolve():  # other sets never repeat a test position
        exclude.update(p["fen"] for p in endgame_positions())
    for path in args.exclude:
        exclude.update(p["fen"] for p in load_positions(path))
    rows = generate(args.seed, args.depth, args.per_setup, args.attempts, exclude)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    counts = {s: sum(r["setup"] == s for r in rows) for s in SETUPS}
    name = engine_info(find_stockfish()).name
    print(
        f"{len(rows)} positions ({', '.join(f'{k} {v}' for k, v in counts.items())}) "
        f"with {name}, depth {args.depth}, in {time.perf_counter() - t0:.0f} s -> {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
