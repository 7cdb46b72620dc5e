"""Stockfish for the chess tasks: finding the binary, strength settings, and one process per game.

The engine is Debian's ``stockfish`` package (Stockfish 15.1 on Debian 12), found through
``$STOCKFISH_PATH``, then ``PATH``, then ``/usr/games`` (where Debian installs it, often not on
``PATH``). Without it :class:`StockfishNotFound` says in one line how to install it.

Strength. Stockfish weakens itself (``Skill Level`` < 20 or ``UCI_LimitStrength`` + ``UCI_Elo``)
by searching with MultiPV 4 up to depth ``1 + level`` and then picking one of the four best moves
with a random "weakness" push (``Skill::pick_best`` in ``search.cpp``). Its random generator is
seeded from the clock, so a game against a weakened Stockfish cannot be replayed. We therefore ask
the engine for the same MultiPV-4 search at full strength and make the weakened pick here, with
the same formula and the episode's seeded generator (:func:`pick_skill_move`): the opponent plays
like Stockfish at that level and every game reproduces from its seed.

The Elo is converted to a level with Stockfish 15.1's own fit (:func:`level_from_elo`) after
clamping it to the engine's ``UCI_Elo`` range, which starts at 1350 on Stockfish 15.1, so
LMRL-Gym's "Elo 1200" is Elo 1350 (level 0.01: depth-1 search, nearly uniform among the top 4).

Reproducibility. Every search starts from a fresh engine state (``ucinewgame`` clears the hash and
the move histories) and a single thread, so a move depends only on the position, the moves that
led to it, the limit and the seeded draw. ``movetime`` limits and ``threads`` > 1 make full-strength
moves depend on timing; games played with them do not replay exactly.
"""

from __future__ import annotations

import os
import random
import shutil
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import chess
import chess.engine

PATH_ENV = "STOCKFISH_PATH"
DEBIAN_PATHS = ("/usr/games/stockfish", "/usr/local/bin/stockfish", "/usr/bin/stockfish")
INSTALL_HINT = (
    "Stockfish is not installed: install it with `sudo apt-get install stockfish` "
    f"(or set {PATH_ENV} to the engine binary)"
)
FULL_LEVEL = 20.0
DEFAULT_DEPTH = 12
"""Search depth of full-strength moves when no depth, movetime or nodes limit is given."""
SKILL_MULTIPV = 4
PAWN_VALUE_MG = 126
"""Stockfish 15.1's internal middlegame pawn value (caps the random part of the skill push)."""
NORMALIZE_TO_PAWN = 361
"""Stockfish 15.1 reports ``internal * 100 / 361`` as centipawns; we invert it for the push."""
VALUE_MATE = 32000


class StockfishNotFound(RuntimeError):
    """The engine binary is missing; the message says how to install it."""


class EngineFailure(RuntimeError):
    """The engine process died or misbehaved during a game (it has been closed)."""


def find_stockfish(path: str | None = None) -> str:
    """The engine binary: ``path``, ``$STOCKFISH_PATH``, ``stockfish`` on PATH, or Debian's."""
    candidates = [path] if path else []
    if os.environ.get(PATH_ENV):
        candidates.append(os.environ[PATH_ENV])
    on_path = shutil.which("stockfish")
    if on_path:
        candidates.append(on_path)
    candidates.extend(DEBIAN_PATHS)
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    if path:
        raise StockfishNotFound(f"no executable Stockfish at {path}; {INSTALL_HINT}")
    raise StockfishNotFound(INSTALL_HINT)


@dataclass(frozen=True)
class EngineInfo:
    path: str
    name: str
    elo_min: int
    elo_max: int


@lru_cache(maxsize=8)
def engine_info(path: str) -> EngineInfo:
    """Ask the engine once per process for its name and ``UCI_Elo`` range (then quit it)."""
    eng = _popen(path)
    try:
        opt = eng.options.get("UCI_Elo")
        if opt is not None:
            assert opt.min is not None and opt.max is not None  # a spin option: UCI sends both
            lo, hi = int(opt.min), int(opt.max)
        else:
            lo, hi = 1350, 2850
        return EngineInfo(path, str(eng.id.get("name", "Stockfish")), lo, hi)
    finally:
        _quit(eng)


def level_from_elo(elo: float) -> float:
    """Stockfish 15.1's fractional skill level for a ``UCI_Elo`` (0..20)."""
    x = max(0.0, (elo - 1346.6) / 143.4)
    return min(FULL_LEVEL, x ** (1 / 0.806))


def clamp_elo(elo: int, info: EngineInfo) -> int:
    """The Elo the engine really plays: clamped into its ``UCI_Elo`` range."""
    return max(info.elo_min, min(info.elo_max, int(elo)))


@dataclass(frozen=True)
class Strength:
    """How one side searches. ``level`` < 20 is a weakened (skill-limited) player."""

    level: float = FULL_LEVEL
    depth: int | None = None
    movetime_ms: int | None = None
    nodes: int | None = None
    elo: int | None = None
    """The effective (clamped) Elo when the level came from an Elo, for display."""

    @property
    def limited(self) -> bool:
        return self.level < FULL_LEVEL

    def search_limit(self) -> chess.engine.Limit:
        """The UCI ``go`` limit: depth 1 + level when weakened, else the given limits."""
        t = None if self.movetime_ms is None else self.movetime_ms / 1000.0
        if self.limited:
            d = 1 + int(self.level)
            if self.depth is not None:
                d = min(d, self.depth)
            return chess.engine.Limit(depth=d, time=t, nodes=self.nodes)
        depth = self.depth
        if depth is None and t is None and self.nodes is None:
            depth = DEFAULT_DEPTH
        return chess.engine.Limit(depth=depth, time=t, nodes=self.nodes)

    def describe(self) -> str:
        if self.elo is not None:
            head = f"Elo {self.elo}"
        elif self.limited:
            head = f"skill {self.level:g}"
        else:
            head = "full strength"
        lim = self.search_limit()
        parts = [
            f"depth {lim.depth}" if lim.depth else "",
            f"{self.movetime_ms} ms" if self.movetime_ms else "",
        ]
        parts.append(f"{self.nodes} nodes" if self.nodes else "")
        extra = ", ".join(p for p in parts if p)
        return f"Stockfish {head}" + (f" ({extra})" if extra else "")


def make_strength(
    info: EngineInfo | None,
    *,
    elo: int | None = None,
    skill_level: float | None = None,
    depth: int | None = None,
    movetime: int | None = None,
    nodes: int | None = None,
) -> Strength:
    """Combine task options into a :class:`Strength` (an Elo wins over a skill level, as in UCI)."""
    eff_elo = None
    if elo is not None:
        eff_elo = clamp_elo(elo, info) if info is not None else int(elo)
        level = level_from_elo(eff_elo)
    elif skill_level is not None:
        level = max(0.0, min(FULL_LEVEL, float(skill_level)))
    else:
        level = FULL_LEVEL
    for name, v in (("depth", depth), ("movetime", movetime), ("nodes", nodes)):
        if v is not None and int(v) < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return Strength(
        level=level,
        depth=None if depth is None else int(depth),
        movetime_ms=None if movetime is None else int(movetime),
        nodes=None if nodes is None else int(nodes),
        elo=eff_elo,
    )


def _internal(score: chess.engine.PovScore, turn: chess.Color) -> int:
    """A UCI score as Stockfish's internal value, from the side to move's point of view."""
    s = score.pov(turn)
    mate = s.mate()
    if mate is not None:
        plies = 2 * mate - 1 if mate > 0 else -2 * mate
        return VALUE_MATE - plies if mate > 0 else -(VALUE_MATE - plies)
    cp = s.score()
    return int((cp or 0) * NORMALIZE_TO_PAWN / 100)


def pick_skill_move(
    lines: Sequence[tuple[chess.Move, int]], level: float, rng: random.Random
) -> chess.Move:
    """Stockfish's ``Skill::pick_best``: best-first (move, internal score) lines, weakness push.

    Each candidate gets ``(weakness * (top - score) + delta * (r % weakness)) / 128`` added, with
    ``weakness = 120 - 2 * level`` and ``delta = min(top - worst, pawn)``; the highest total wins
    (a later candidate wins ties, as in Stockfish).
    """
    if not lines:
        raise ValueError("no candidate moves")
    top = lines[0][1]
    delta = min(top - lines[-1][1], PAWN_VALUE_MG)
    weakness = 120.0 - 2.0 * level
    iw = max(1, int(weakness))
    best, best_total = lines[0][0], None
    for move, score in lines:
        push = int((weakness * (top - score) + delta * rng.randrange(iw)) / 128)
        if best_total is None or score + push >= best_total:
            best_total, best = score + push, move
    return best


def _popen(path: str) -> chess.engine.SimpleEngine:
    try:
        return chess.engine.SimpleEngine.popen_uci([path], timeout=20.0)
    except FileNotFoundError:
        raise StockfishNotFound(INSTALL_HINT) from None
    except (OSError, chess.engine.EngineError, TimeoutError) as e:
        raise EngineFailure(f"could not start Stockfish at {path}: {e}") from None


def _quit(eng: chess.engine.SimpleEngine) -> None:
    """Quit politely, then make sure the process is gone."""
    try:
        eng.quit()
    except Exception:  # noqa: BLE001 - the process may already be dead; close() below reaps it
        pass
    try:
        eng.close()
    except Exception:  # noqa: BLE001
        pass


class Engine:
    """One Stockfish process, opened on first use and closed by :meth:`close` (idempotent).

    A finaliser also closes it if the owner is garbage-collected without closing it.
    """

    def __init__(self, path: str, threads: int = 1, hash_mb: int = 1) -> None:
        self.path = path
        self.threads = max(1, int(threads))
        self.hash_mb = max(1, int(hash_mb))
        self._eng: chess.engine.SimpleEngine | None = None
        self._finalizer: weakref.finalize | None = None
        self._game: object = object()

    @property
    def is_open(self) -> bool:
        return self._eng is not None

    @property
    def pid(self) -> int | None:
        """The engine process id while it runs (for tests and diagnostics)."""
        if self._eng is None:
            return None
        transport = getattr(self._eng.protocol, "transport", None)
        return transport.get_pid() if transport is not None else None

    def open(self) -> chess.engine.SimpleEngine:
        if self._eng is None:
            eng = _popen(self.path)
            try:
                eng.configure({"Threads": self.threads, "Hash": self.hash_mb})
            except Exception as e:
                _quit(eng)
                raise EngineFailure(f"could not configure Stockfish: {e}") from None
            self._eng = eng
            self._finalizer = weakref.finalize(self, _quit, eng)
        return self._eng

    def close(self) -> None:
        eng, self._eng = self._eng, None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if eng is not None:
            _quit(eng)

    def choose_move(
        self, board: chess.Board, strength: Strength, rng: random.Random, *, fresh: bool = True
    ) -> chess.Move:
        """The move Stockfish at ``strength`` plays in ``board`` (side to move).

        ``fresh`` starts the search from a cleared engine state (``ucinewgame``), so the move does
        not depend on earlier searches; the opponent always searches fresh, which keeps replays
        (that skip the agent's searches) exact.
        """
        eng = self.open()
        limit = strength.search_limit()
        if fresh:
            self._game = object()  # python-chess sends ucinewgame when the game object changes
        try:
            if strength.limited:
                n = min(SKILL_MULTIPV, board.legal_moves.count())
                infos = eng.analyse(board, limit, multipv=n, game=self._game)
                lines = [
                    (i["pv"][0], _internal(i["score"], board.turn))
                    for i in infos
                    if i.get("pv") and "score" in i
                ]
                if lines:
                    return pick_skill_move(lines, strength.level, rng)
            result = eng.play(board, limit, game=self._game)
        except Exception as e:  # noqa: BLE001 - a dead engine surfaces as several error types
            self.close()
            raise EngineFailure(
                f"Stockfish failed during the game: {type(e).__name__} {e}".strip()
            ) from None
        if result.move is None:
            self.close()
            raise EngineFailure("Stockfish returned no move")
        return result.move

    def mate_in(self, board: chess.Board, depth: int) -> tuple[int | None, int | None]:
        """(mate in n moves for the side to move or None, centipawns or None) at ``depth``."""
        eng = self.open()
        info = eng.analyse(board, chess.engine.Limit(depth=depth), game=object())
        s = info["score"].pov(board.turn)
        return s.mate(), s.score()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
