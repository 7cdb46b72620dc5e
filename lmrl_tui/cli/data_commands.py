"""The store's data commands: ``generate`` (episodes played by a policy), ``export`` (LMRL-Gym
files, our JSONL, chess BC pairs, a Hugging Face ``datasets`` folder or a Minari dataset),
``import`` and ``merge`` (stores from several hosts into one)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lmrl_tui.cli.argtypes import positive, seed
from lmrl_tui.cli.errors import EXIT_USAGE, CliError, report_lock_wait

MERGE_HELP = "merge stores (from several hosts) into one: no duplicates, ids remapped, each episode's origin kept"


def add_generate_command(
    subparsers: Any, parents: list[argparse.ArgumentParser]
) -> argparse.ArgumentParser:
    from envs.core.options import options_help
    from training.args import task_option

    g = subparsers.add_parser(
        "generate",
        parents=parents,
        help="play episodes with a scripted policy or a checkpoint and store them",
    )
    g.add_argument("task")
    g.add_argument("--episodes", type=positive, default=100)
    g.add_argument(
        "--policy",
        default="behaviour",
        help="behaviour, strong/optimal, random, a checkpoint folder, hf:MODEL, "
        "http:MODEL@BASE_URL or guided:LLM+CHECKPOINT (a language model guided by goal values or "
        "an utterance-level critic)",
    )
    g.add_argument("--seed", type=seed, default=0, help="first seed; episode i uses seed+i")
    g.add_argument(
        "--partner",
        default=None,
        help="the other side: hf:MODEL, http:MODEL@BASE_URL or a checkpoint "
        "folder trained with --side partner (default: the built-in partner)",
    )
    g.add_argument(
        "--option",
        type=task_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="task option (repeatable; `lmrl tasks` lists them) · "
        + " · ".join(options_help().splitlines()),
    )
    g.add_argument("--batch", type=positive, default=200, help="episodes per database transaction")
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    g.set_defaults(run=run_generate, needs_store=True)
    return g


def run_generate(args: argparse.Namespace, store: Any) -> int:
    import envs
    from data.generate import generate
    from envs.players.agents import make_agent, make_model_agent

    spec = envs.spec(args.task)
    partner = None
    if args.partner:
        if len(spec.roles) < 2:
            raise CliError(f"{args.task} has no partner side")
        partner = make_model_agent(args.partner, role=spec.roles[1])
        if (
            partner is None and Path(args.partner).expanduser().exists()
        ):  # a checkpoint of that side
            partner = make_agent(args.task, args.partner, role=spec.roles[1])
        if partner is None:
            raise CliError(
                "--partner takes hf:MODEL, http:MODEL@BASE_URL or a checkpoint folder "
                "(lmrl train bc --side partner)"
            )
    agent = make_agent(args.task, args.policy, role=spec.roles[0])
    if agent is None:
        raise CliError("generate needs a policy, not a human")
    progress = None if args.quiet or not sys.stderr.isatty() else _progress(args.episodes)
    try:
        res = generate(
            store,
            args.task,
            agent,
            args.episodes,
            seed=args.seed,
            options=dict(args.option),
            partner=partner,
            batch=args.batch,
            on_episode=(lambda _n: progress.advance(1)) if progress else None,
        )
    finally:
        if progress:
            progress.stop()
    print(
        f"wrote {res.written} {args.task} episodes ({args.policy}, seeds {args.seed}..{args.seed + args.episodes - 1}) "
        f"to {store.path} in {res.seconds:.1f}s: mean return {res.mean_return:.3f}, success {res.success_rate:.1%}"
    )
    return 0


class _progress:
    """A small stderr progress bar (rich), used only on a terminal."""

    def __init__(self, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self._p = Progress(
            "generating", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), transient=True
        )
        self._task = self._p.add_task("gen", total=total)
        self._p.start()

    def advance(self, n: int) -> None:
        self._p.advance(self._task, n)

    def stop(self) -> None:
        self._p.stop()


def add_export_command(
    subparsers: Any, parents: list[argparse.ArgumentParser]
) -> argparse.ArgumentParser:
    from training.args import add_dataset_arguments, add_task_arguments

    e = subparsers.add_parser(
        "export", parents=parents, help="write episodes as LMRL-Gym files or our JSONL"
    )
    add_task_arguments(
        e, option_help="keep episodes logged with this task option key=value (repeatable)"
    )
    add_dataset_arguments(e)
    e.add_argument(
        "--format",
        choices=["lmrl", "jsonl", "lmrl-bc", "hf", "minari", "chat"],
        default="jsonl",
        help="lmrl: LMRL-Gym's episode files; jsonl: ours, lossless; lmrl-bc: LMRL's chess BC pairs, one "
        "{from_state, action} per legal agent move (chess, endgames); hf: a Hugging Face datasets folder; minari: a Minari dataset; "
        "chat: chat messages with per-turn rewards and provenance (JSON lines, or a datasets folder when --out is not a .jsonl/.json file)",
    )
    e.add_argument("--out", "-o", default="-", help="output file (default: standard output)")
    e.add_argument(
        "--rows",
        choices=["step", "episode", "turn"],
        default=None,
        help="--format hf: one row per step (default) or per episode; --format chat: one row per "
        "episode (default) or per turn",
    )
    e.add_argument(
        "--side",
        choices=["agent", "partner"],
        default="agent",
        help="--format chat: whose conversation (default: the acting side's; partner: the oracle's, "
        "the buyer's, the chess opponent's)",
    )
    e.add_argument(
        "--minari-id",
        default=None,
        metavar="NS/NAME-vN",
        help="--format minari: the dataset id (default: lmrl/TASK-v0)",
    )
    e.set_defaults(run=run_export, needs_store=True)
    return e


def run_export(args: argparse.Namespace, store: Any) -> int:
    from data.io.formats import export_episodes
    from training.args import dataset_query

    query = dataset_query(args)
    rows_for = {"hf": ("step", "episode"), "chat": ("episode", "turn")}
    if args.rows is not None and args.rows not in rows_for.get(args.format, ()):
        takes = rows_for.get(args.format)
        raise CliError(
            f"--format {args.format} takes --rows {' or '.join(takes)}, not {args.rows}"
            if takes
            else "--rows applies to --format hf and --format chat"
        )
    if args.format == "chat":
        return run_chat_export(args, store, query)
    if args.rows is None:
        args.rows = "step"
    if args.format in ("hf", "minari"):  # a folder (a dataset and its card), not a stream
        return run_hf_export(args, store, query)
    what = "episodes"
    write = lambda f: export_episodes(store, f, args.format, query)  # noqa: E731
    if args.format == "lmrl-bc":
        if args.task not in ("chess", "endgames"):
            raise CliError(
                "--format lmrl-bc is LMRL's chess BC pairs: give --task chess or --task endgames"
            )
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


def run_hf_export(args: argparse.Namespace, store: Any, query: Any) -> int:
    """``export --format hf|minari --out FOLDER``: a ``datasets`` folder (with its parquet file and
    card), or a Minari datasets root holding one dataset."""
    if args.out == "-":
        print(
            f"lmrl: error: --format {args.format} writes a folder: give --out FOLDER",
            file=sys.stderr,
        )
        return 1
    if args.format == "minari":
        from data.io.minari_export import export_minari

        m = export_minari(store, query, args.out, dataset_id=args.minari_id)
        skipped = f"; {m.skipped} without steps left out" if m.skipped else ""
        print(
            f"exported {m.episodes} episodes as the Minari dataset {m.dataset_id} under {args.out}{skipped} "
            f"(load it with {m.dataset_id!r} and MINARI_DATASETS_PATH={args.out})",
            file=sys.stderr,
        )
        return 0
    from data.io.hf_export import export_hf

    result = export_hf(store, query, args.out, rows=args.rows)
    print(
        f"exported {result.episodes} episodes ({result.rows} rows, one per {args.rows}) to {args.out}",
        file=sys.stderr,
    )
    return 0


def run_chat_export(args: argparse.Namespace, store: Any, query: Any) -> int:
    """``export --format chat``: JSON lines to standard output or a ``.jsonl``/``.json`` file, or
    a ``datasets`` folder (``load_from_disk``) at any other ``--out``."""
    from data.io.chat_export import export_chat_folder, write_chat_jsonl

    rows = args.rows or "episode"
    if args.out == "-":
        result = write_chat_jsonl(store, sys.stdout, query, rows=rows, side=args.side)
        where = "standard output"
    elif Path(args.out).suffix.lower() in (".jsonl", ".json"):
        out = Path(args.out)
        try:
            with out.open("w", encoding="utf-8") as f:
                result = write_chat_jsonl(store, f, query, rows=rows, side=args.side)
        except OSError as e:
            raise CliError(f"cannot write {out}: {e.strerror}") from None
        where = str(out)
    else:
        result = export_chat_folder(store, query, args.out, rows=rows, side=args.side)
        where = f"the datasets folder {args.out}"
    left = f"; {result.skipped} left out (no steps, or one-sided with --side partner)"
    print(
        f"exported {result.episodes} episodes as chat ({result.rows} rows, one per {rows}) "
        f"to {where}{left if result.skipped else ''}",
        file=sys.stderr,
    )
    return 0


def add_import_command(
    subparsers: Any, parents: list[argparse.ArgumentParser]
) -> argparse.ArgumentParser:
    i = subparsers.add_parser(
        "import", parents=parents, help="read LMRL-Gym files or our JSONL into the store"
    )
    i.add_argument("file")
    i.add_argument("--format", choices=["lmrl", "jsonl"], default="jsonl")
    i.add_argument("--task", default=None, help="task id (needed for the lmrl format)")
    i.set_defaults(run=run_import, needs_store=True)
    return i


def run_import(args: argparse.Namespace, store: Any) -> int:
    from data.io.formats import FormatError, import_episodes

    try:  # all or nothing: a bad file is one line naming the line, exit 2, nothing written
        n = import_episodes(store, args.file, args.format, args.task)
    except FormatError as e:
        print(f"lmrl: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(
        f"imported {n} episodes into {store.path}"
        + (f": {args.file} holds no episodes" if n == 0 else "")
    )
    return 0


def add_merge_command(
    subparsers: Any, parents: Iterable[argparse.ArgumentParser] = ()
) -> argparse.ArgumentParser:
    """``merge STORE... --into STORE`` (without the common ``--db``: it names its stores itself)."""
    m = subparsers.add_parser(
        "merge",
        parents=list(parents),
        help=MERGE_HELP,
        description=MERGE_HELP + ". Merging twice changes nothing.",
    )
    m.add_argument("stores", nargs="+", metavar="STORE", help="the stores to read (left untouched)")
    m.add_argument(
        "--into",
        required=True,
        metavar="STORE",
        help="the store to merge into (created if missing)",
    )
    m.add_argument("--debug", action="store_true", help="on an error, show the traceback too")
    m.set_defaults(run=run_merge, needs_store=False)
    return m


def run_merge(args: argparse.Namespace, store: Any = None) -> int:
    """Merge ``args.stores`` into ``args.into``; a bad store is one line and nothing is written."""
    from data.io.merge import merge_stores

    report = merge_stores(args.stores, args.into, on_lock_wait=report_lock_wait)
    print(f"merged {len(args.stores)} store(s) into {args.into}: {report.summary()}")
    return 0
