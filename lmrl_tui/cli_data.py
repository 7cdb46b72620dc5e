"""``lmrl merge`` (stores from several hosts into one) and ``lmrl export --format hf`` (a
Hugging Face ``datasets`` folder): the store-level data commands that are not in ``cli.py``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

MERGE_HELP = "merge stores (from several hosts) into one: no duplicates, ids remapped, each episode's origin kept"


def add_data_commands(subparsers: Any, parents: Iterable[argparse.ArgumentParser] = ()) -> argparse.ArgumentParser:
    """``merge STORE... --into STORE``, and export's ``--rows`` and ``--minari-id`` (for ``--format
    hf`` and ``minari``)."""
    m = subparsers.add_parser("merge", help=MERGE_HELP, description=MERGE_HELP + ". Merging twice changes nothing.")
    m.add_argument("stores", nargs="+", metavar="STORE", help="the stores to read (left untouched)")
    m.add_argument("--into", required=True, metavar="STORE", help="the store to merge into (created if missing)")
    m.add_argument("--debug", action="store_true", help="on an error, show the traceback too")
    m.set_defaults(run=run_merge)  # called without a store: merge names its stores itself
    export = subparsers.choices.get("export")
    if export is not None:
        export.add_argument("--rows", choices=["step", "episode"], default="step",
                            help="--format hf: one row per step (default) or per episode")  # fmt: skip
        export.add_argument("--minari-id", default=None, metavar="NS/NAME-vN",
                            help="--format minari: the dataset id (default: lmrl/TASK-v0)")  # fmt: skip
    return m


def run_merge(args: argparse.Namespace, store: Any = None) -> int:
    """Merge ``args.stores`` into ``args.into``; a bad store is one line and nothing is written."""
    from data.io.merge import merge_stores

    report = merge_stores(args.stores, args.into, on_lock_wait=_report_lock_wait)
    print(f"merged {len(args.stores)} store(s) into {args.into}: {report.summary()}")
    return 0


def _report_lock_wait(waited: float) -> None:
    print(f"lmrl: waiting for another process to finish writing({waited:.0f} s so far)", file=sys.stderr)


def run_hf_export(args: argparse.Namespace, store: Any, query: Any) -> int:
    """``export --format hf|minari --out FOLDER``: a ``datasets`` folder (with its parquet file and
    card), or a Minari datasets root holding one dataset."""
    if args.out == "-":
        print(f"lmrl: error: --format {args.format} writes a folder: give --out FOLDER", file=sys.stderr)
        return 1
    if args.format == "minari":
        from data.io.minari_export import export_minari

        m = export_minari(store, query, args.out, dataset_id=args.minari_id)
        skipped = f"; {m.skipped} without steps left out" if m.skipped else ""
        print(f"exported {m.episodes} episodes as the Minari dataset {m.dataset_id} under {args.out}{skipped} "
              f"(load it with {m.dataset_id!r} and MINARI_DATASETS_PATH={args.out})", file=sys.stderr)  # fmt: skip
        return 0
    from data.io.hf_export import export_hf

    result = export_hf(store, query, args.out, rows=args.rows)
    print(f"exported {result.episodes} episodes ({result.rows} rows, one per {args.rows}) to {args.out}", file=sys.stderr)
    return 0
