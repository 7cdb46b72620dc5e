"""How ``lmrl`` fails: :class:`CliError` (a command's own one-line refusal), the usage exit status,
and which exceptions are the user's input or the machine's setup (one line, no traceback)."""

from __future__ import annotations

import sys

EXIT_USAGE = 2


class CliError(Exception):
    pass


def database_errors() -> tuple[type[BaseException], ...]:
    from data.store import DATABASE_ERRORS

    return DATABASE_ERRORS


def user_errors() -> tuple[type[BaseException], ...]:
    from data.io.formats import FormatError
    from data.store import StoreError
    from envs.core import UnknownPolicy, UnknownTask
    from envs.players.agents import AgentChoiceError

    errs: list[type[BaseException]] = [
        CliError,
        StoreError,
        FormatError,
        UnknownTask,
        UnknownPolicy,
        AgentChoiceError,
    ]
    try:
        from training.errors import TrainingError

        errs.append(TrainingError)
    except ImportError:
        pass
    return tuple(errs)


def setup_error(e: BaseException) -> bool:
    """The machine's setup, not the run: Stockfish is missing or will not start (e.g. a bad
    ``STOCKFISH_PATH``), or a model endpoint cannot be reached or answers badly."""
    engine = sys.modules.get("envs.chess.stockfish")  # loaded if the error can come from it
    remote = sys.modules.get("envs.players.remote")
    return (
        engine is not None and isinstance(e, (engine.StockfishNotFound, engine.EngineFailure))
    ) or (remote is not None and isinstance(e, remote.EndpointError))


def with_notes(line: str, e: BaseException) -> str:
    """``line`` followed by the notes on ``e`` (e.g. what a run that failed part-way kept)."""
    notes = "; ".join(getattr(e, "__notes__", ()))
    return f"{line} ({notes})" if notes else line


def report_lock_wait(waited: float) -> None:
    """What a command says while another process holds the store's write lock."""
    print(
        f"lmrl: waiting for another process to finish writing ({waited:.0f} s so far)",
        file=sys.stderr,
    )
