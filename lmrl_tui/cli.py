"""The ``lmrl`` command: the app and the headless jobs (``lmrl --help`` lists them). Bad input gets one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from lmrl_tui.argtypes import app_only as _app_only
from lmrl_tui.argtypes import positive as _positive
from lmrl_tui.argtypes import seed as _seed
from lmrl_tui.cli_data import add_data_commands, run_hf_export
from lmrl_tui.cli_play import add_play_command, cmd_app

EXIT_USAGE = 2


class CliError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


DB_HELP = "episode database (default: $LMRL_DB or the user data directory)"


def build_parser() -> argparse.ArgumentParser:
    """The one ``lmrl`` command tree; ``--db`` works before or after any subcommand."""
    from envs.core.options import options_help
    from lmrl_tui.serve_command import add_serve_command
    from training.algorithms import add_eval_command, add_reproduce_command, add_train_command
    from training.args import add_dataset_arguments, add_task_arguments, task_option

    # every subcommand takes --db too; SUPPRESS keeps a value given before the subcommand
    common = _Parser(add_help=False)
    common.add_argument("--db", default=argparse.SUPPRESS, help=DB_HELP)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="on an error, show the traceback too (or set LMRL_DEBUG=1)")  # fmt: skip
    p = _Parser(prog="lmrl", description="Play, log, train and watch LMRL-Gym tasks in the terminal.")
    p.add_argument("--db", help=DB_HELP)
    p.add_argument("--debug", action="store_true", help="on an error, show the traceback too (or set LMRL_DEBUG=1)")
    p.add_argument("--player", help="your player name in the app")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    sub.add_parser("tasks", parents=[common], help="list the tasks")

    g = sub.add_parser("generate", parents=[common], help="play episodes with a scripted policy or a checkpoint and store them")
    g.add_argument("task")
    g.add_argument("--episodes", type=_positive, default=100)
    g.add_argument("--policy", default="behaviour", help="behaviour, strong/optimal, random, a checkpoint folder, hf:MODEL, "
                   "http:MODEL@BASE_URL or guided:LLM+CHECKPOINT (a language model guided by goal values)")
    g.add_argument("--seed", type=_seed, default=0, help="first seed; episode i uses seed+i")
    g.add_argument("--partner", default=None, help="the other side: hf:MODEL, http:MODEL@BASE_URL or a checkpoint "
                   "folder trained with --side partner (default: the built-in partner)")
    g.add_argument("--option", type=task_option, action="append", default=[], metavar="KEY=VALUE",
                   help="task option (repeatable; `lmrl tasks` lists them) · " + " · ".join(options_help().splitlines()))
    g.add_argument("--batch", type=_positive, default=200, help="episodes per database transaction")
    g.add_argument("--quiet", action="store_true", help="no progress bar")

    s = sub.add_parser("stats", parents=[common], help="per task, source and side: episodes, mean return, success rate")
    s.add_argument("--task", default=None)
    s.add_argument("--by", choices=["player"], default=None, help="split the sides by player too, then a row per annotator: episodes, time played, success, mean return, think time, refused inputs, labels")

    e = sub.add_parser("export", parents=[common], help="write episodes as LMRL-Gym files or our JSONL")
    add_task_arguments(e, option_help="keep episodes logged with this task option key=value (repeatable)")
    add_dataset_arguments(e)
    e.add_argument("--format", choices=["lmrl", "jsonl", "lmrl-bc", "hf", "minari"], default="jsonl",
                   help="lmrl: LMRL-Gym's episode files; jsonl: ours, lossless; lmrl-bc: LMRL's chess BC pairs, one "
                   "{from_state, action} per legal agent move (chess, endgames); hf: a Hugging Face datasets folder; minari: a Minari dataset")
    e.add_argument("--out", "-o", default="-", help="output file (default: standard output)")

    i = sub.add_parser("import", parents=[common], help="read LMRL-Gym files or our JSONL into the store")
    i.add_argument("file")
    i.add_argument("--format", choices=["lmrl", "jsonl"], default="jsonl")
    i.add_argument("--task", default=None, help="task id (needed for the lmrl format)")

    for add in (add_play_command, add_train_command, add_eval_command, add_reproduce_command, add_serve_command,
                add_data_commands):  # fmt: skip
        add(sub, [common])
    return p


# -- commands ------------------------------------------------------------------------------------
def cmd_tasks(args: argparse.Namespace) -> int:
    import envs

    rows = []
    for task_id in envs.ids():
        spec = envs.spec(task_id)
        rows.append((task_id, spec.title, " vs ".join(spec.roles), str(spec.max_turns), ", ".join(envs.policies(task_id))))
    _print_table(("task", "title", "sides", "max turns", "policies"), rows)
    print("\nTask options (--option KEY=VALUE; the new-episode dialog lists them too):")
    for task_id in envs.ids():
        specs = envs.core.registry.option_specs(task_id)
        print(f"  {task_id}:" + "".join(f"\n    {o.describe()}  {o.help}".rstrip() for o in specs) or " none")
    return 0


def cmd_generate(args: argparse.Namespace, store: Any) -> int:
    import envs
    from data.generate import generate
    from envs.players.agents import make_agent, make_model_agent

    spec = envs.spec(args.task)
    partner = None
    if args.partner:
        if len(spec.roles) < 2:
            raise CliError(f"{args.task} has no partner side")
        partner = make_model_agent(args.partner, role=spec.roles[1])
        if partner is None and Path(args.partner).expanduser().exists():  # a checkpoint of that side
            partner = make_agent(args.task, args.partner, role=spec.roles[1])
        if partner is None:
            raise CliError("--partner takes hf:MODEL, http:MODEL@BASE_URL or a checkpoint folder "
                           "(lmrl train bc --side partner)")
    agent = make_agent(args.task, args.policy, role=spec.roles[0])
    if agent is None:
        raise CliError("generate needs a policy, not a human")
    progress = None if args.quiet or not sys.stderr.isatty() else _progress(args.episodes)
    try:
        res = generate(
            store, args.task, agent, args.episodes, seed=args.seed, options=dict(args.option),
            partner=partner, batch=args.batch,
            on_episode=(lambda _n: progress.advance(1)) if progress else None,
        )  # fmt: skip
    finally:
        if progress:
            progress.stop()
    print(f"wrote {res.written} {args.task} episodes ({args.policy}, seeds {args.seed}..{args.seed + args.episodes - 1}) "
          f"to {store.path} in {res.seconds:.1f}s: mean return {res.mean_return:.3f}, success {res.success_rate:.1%}")
    return 0


class _progress:
    """A small stderr progress bar (rich), used only on a terminal."""

    def __init__(self, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self._p = Progress("generating", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), transient=True)
        self._task = self._p.add_task("gen", total=total)
        self._p.start()

    def advance(self, n: int) -> None:
        self._p.advance(self._task, n)

    def stop(self) -> None:
        self._p.stop()


def cmd_stats(args: argparse.Namespace, store: Any) -> int:
    import envs
    from data.stats import breakdown
    from lmrl_tui.cli_annotators import print_annotators

    print(f"database: {store.path}")
    per_source = breakdown(store, ("task", "source"), task=args.task)
    if not per_source:  # a task no longer registered still shows its stored episodes
        if args.task and args.task not in (known := envs.ids()):
            raise CliError(f"unknown task {args.task!r}; known tasks: {', '.join(known)}")
        what, task = (f"{args.task} episodes", args.task) if args.task else ("episodes", "TASK")
        print(f"no {what} yet: play in the app (lmrl) or run `lmrl generate {task}`")
        return 0
    side_keys = ("task", "source", "agent_kind", "partner_kind", *(("player",) if args.by == "player" else ()))
    sides: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in breakdown(store, side_keys, task=args.task):
        sides.setdefault((r["task"], r["source"]), []).append(r)
    lines: list[tuple[str, dict[str, Any] | None]] = []  # (label, numbers); None: a task's title
    for i, r in enumerate(per_source):
        if i == 0 or per_source[i - 1]["task"] != r["task"]:
            lines.append((r["task"], None))
        lines.append(("  " + r["source"], r))
        mine = [(_side_label(s), s) for s in sides.get((r["task"], r["source"]), [])]
        if not (len(mine) == 1 and mine[0][0] == r["source"]):
            lines.extend(("    " + label, s) for label, s in mine)
    _print_stats(lines)
    print_annotators(store, args)  # with --by player: a row per annotator too
    return 0


def _side_label(r: dict[str, Any]) -> str:
    """Who played: the agent's kind, ``v`` the partner's (``human v scripted``), ``(player)``."""
    label = r["agent_kind"] if r["partner_kind"] is None else f"{r['agent_kind']} v {r['partner_kind']}"
    return label + (f" ({r['player']})" if r.get("player") else "")


_STATS_COLUMNS = (("episodes", "episodes", "d"), ("finished", "finished", "d"), ("in progress", "in_progress", "d"),
                  ("abandoned", "abandoned", "d"), ("mean return", "mean_return", ".3f"),
                  ("success", "success_rate", ".1%"), ("steps", "steps", "d"),
                  ("not understood", "not_understood", ".1%"))  # fmt: skip
_OPTIONAL = ("in_progress", "abandoned", "not_understood")
"""Columns left out when no row has anything in them (keeps the table within 100 columns)."""


def _print_stats(lines: Sequence[tuple[str, dict[str, Any] | None]]) -> None:
    """The stats table: a task's title line (with its sides' roles), then its sources and their
    sides; numeric columns with two-line titles, one space apart where two would pass 100 columns."""
    import envs

    rows = [n for _, n in lines if n is not None]
    cols = [c for c in _STATS_COLUMNS if c[1] not in _OPTIONAL or any(r[c[1]] not in (None, 0) for r in rows)
            or (c[1] == "not_understood" and any(r[c[1]] is not None for r in rows))]

    def cell(r: dict[str, Any], key: str, spec: str) -> str:
        return "" if r[key] is None else format(r[key], spec)

    label_w = max(len(label) for label, n in lines if n is not None)
    titles = [c[0].split(" ", 1) if " " in c[0] else ["", c[0]] for c in cols]
    widths = [max(len(t[1]), *(len(cell(r, c[1], c[2])) for r in rows)) for t, c in zip(titles, cols, strict=True)]
    gap = "  " if label_w + sum(widths) + 2 * len(widths) <= 100 else " "

    def line(label: str, texts: Sequence[str]) -> str:
        return (label.ljust(label_w) + "".join(gap + t.rjust(w) for t, w in zip(texts, widths, strict=True))).rstrip()

    for part in (0, 1):
        print(line("", [t[part] for t in titles]))
    for label, n in lines:
        if n is None:
            roles = envs.spec(label).roles if label in envs.ids() else ()
            print(label + (f" ({' v '.join(roles)})" if len(roles) > 1 else ""))
        else:
            print(line(label, [cell(n, c[1], c[2]) for c in cols]))


def cmd_export(args: argparse.Namespace, store: Any) -> int:
    from data.io.formats import export_episodes
    from training.args import dataset_query

    query = dataset_query(args)
    if args.format in ("hf", "minari"):  # a folder (a dataset and its card), not a stream
        return run_hf_export(args, store, query)
    what = "episodes"
    write = lambda f: export_episodes(store, f, args.format, query)  # noqa: E731
    if args.format == "lmrl-bc":
        if args.task not in ("chess", "endgames"):
            raise CliError("--format lmrl-bc is LMRL's chess BC pairs: give --task chess or --task endgames")
        from data.io.codecs.chess import export_bc

        what = "move pairs"
        write = lambda f: export_bc(store, f, query)  # noqa: E731
    if args.out == "-":
        n = write(sys.stdout)
    else:
        out = Path(args.out)
        try:
            with out.open("w", encoding="utf-8") as f:
                n = write(f)
        except OSError as e:
            raise CliError(f"cannot write {out}: {e.strerror}") from None
    print(f"exported {n} {what}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace, store: Any) -> int:
    from data.io.formats import FormatError, import_episodes

    try:  # all or nothing: a bad file is one line naming the line, exit 2, nothing written
        n = import_episodes(store, args.file, args.format, args.task)
    except FormatError as e:
        print(f"lmrl: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"imported {n} episodes into {store.path}" + (f": {args.file} holds no episodes" if n == 0 else ""))
    return 0


def _print_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=False)]
    for row in (header, *rows):
        print("  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=False)).rstrip())


WRITING_COMMANDS = frozenset({"generate", "import", "train", "eval"})
"""Commands that write episodes or runs: the store's pages are checked first (no writes to a damaged file)."""


def _open_store(args: argparse.Namespace) -> Any:
    from data.store import Store

    store = Store(args.db, verify=args.command in WRITING_COMMANDS)
    store.on_lock_wait = _report_lock_wait
    return store


def _report_lock_wait(waited: float) -> None:
    print(f"lmrl: waiting for another process to finish writing ({waited:.0f} s so far)", file=sys.stderr)


def _database_errors() -> tuple[type[BaseException], ...]:
    from data.store import DATABASE_ERRORS

    return DATABASE_ERRORS


def _user_errors() -> tuple[type[BaseException], ...]:
    from data.io.formats import FormatError
    from data.store import StoreError
    from envs.core import UnknownPolicy, UnknownTask
    from envs.players.agents import AgentChoiceError

    errs: list[type[BaseException]] = [CliError, StoreError, FormatError, UnknownTask, UnknownPolicy, AgentChoiceError]
    try:
        from training.errors import TrainingError

        errs.append(TrainingError)
    except ImportError:
        pass
    return tuple(errs)


def _setup_error(e: BaseException) -> bool:
    """The machine's setup, not the run: Stockfish is missing or will not start (e.g. a bad
    ``STOCKFISH_PATH``), or a model endpoint cannot be reached or answers badly."""
    engine = sys.modules.get("envs.chess.stockfish")  # loaded if the error can come from it
    remote = sys.modules.get("envs.players.remote")
    return (engine is not None and isinstance(e, (engine.StockfishNotFound, engine.EngineFailure))) or (
        remote is not None and isinstance(e, remote.EndpointError)
    )


def _with_notes(line: str, e: BaseException) -> str:
    """``line`` followed by the notes on ``e`` (e.g. what a run that failed part-way kept)."""
    notes = "; ".join(getattr(e, "__notes__", ()))
    return f"{line} ({notes})" if notes else line


def _trace(debug: bool) -> None:
    """With ``--debug``, the traceback of the error being handled, before its one line."""
    if debug:
        traceback.print_exc(file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``lmrl`` (the app without a subcommand); returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _app_only(argv) or build_parser().parse_args(argv)
    user_errors = _user_errors()
    debug = bool(getattr(args, "debug", False)) or os.environ.get("LMRL_DEBUG") == "1"
    try:
        if args.command in ("tasks", "merge"):  # merge names its stores itself (lmrl_tui.cli_data)
            return cmd_tasks(args) if args.command == "tasks" else int(args.run(args, None))
        store = _open_store(args)
        try:
            if args.command in (None, "play"):
                return cmd_app(args, store)
            if hasattr(args, "run"):  # train ALGO and eval: runners from training.algorithms
                if args.command == "train" and getattr(args, "out", None):
                    from lmrl_tui.runs_control import record_self

                    record_self(args.out)  # the runs screen can follow and stop it
                return int(args.run(args, store))
            return {"generate": cmd_generate, "stats": cmd_stats, "export": cmd_export, "import": cmd_import}[args.command](args, store)
        finally:
            store.close()
    except user_errors as e:
        _trace(debug)
        print(_with_notes(f"lmrl: error: {e}", e), file=sys.stderr)
        return 1
    except _database_errors() as e:  # e.g. a store damaged after it was opened
        _trace(debug)
        print(f"lmrl: error: database error: {e}", file=sys.stderr)
        return 1
    except ImportError as e:
        _trace(debug)
        from envs.players.agents import TRAIN_EXTRA

        print(f"lmrl: error: {e} (for training: {TRAIN_EXTRA})", file=sys.stderr)
        return 1
    except ValueError as e:  # bad task options and the like
        _trace(debug)
        print(_with_notes(f"lmrl: error: {e}", e), file=sys.stderr)
        return 1
    except RuntimeError as e:
        _trace(debug)
        if not _setup_error(e):
            raise
        print(_with_notes(f"lmrl: error: {e}", e), file=sys.stderr)
        return EXIT_USAGE  # the machine's setup, not the run: exit 2, like a usage error
    except KeyboardInterrupt as e:
        _trace(debug)
        print(_with_notes("lmrl: interrupted", e), file=sys.stderr)
        return 130
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
