"""The algorithm registry behind ``lmrl train ALGO`` (no torch at import).

Each :class:`Algorithm` is registered once with its command name, the other spellings the
command line accepts (in any case, as it always has), its config dataclass, the function that
adds its arguments and its runner. :func:`add_train_command` builds ``train`` with one
subcommand per algorithm from it, and :func:`add_eval_command` builds ``eval``; both ``lmrl``
(:mod:`lmrl_tui.cli.parser`) and the launcher entry ``python -m training.cli`` use them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from training.config import ALGO_ALIASES, TrainConfig
from training.offline.cli import add_eval_arguments, add_offline_arguments, run_eval, run_train
from training.online.cli import ALIASES as ONLINE_ALIASES
from training.online.cli import add_online_arguments, run_online
from training.online.config import OnlineConfig

Runner = Callable[[argparse.Namespace, Any], int]
"""A subcommand's runner: ``run(args, store) -> exit status``."""


@dataclass(frozen=True)
class Algorithm:
    """One ``lmrl train`` subcommand."""

    name: str
    """The command name, e.g. ``%bc``."""
    key: str
    """The config's ``algo`` value, e.g. ``pbc``."""
    summary: str
    config: type
    """The config dataclass its flags are generated from (TrainConfig or OnlineConfig)."""
    add_arguments: Callable[[argparse.ArgumentParser, str], None]
    """Adds the subcommand's arguments, given ``key``."""
    run: Runner
    """``run(args, store) -> exit status``."""
    aliases: tuple[str, ...] = ()
    online: bool = False


ALGORITHMS: dict[str, Algorithm] = {}


def register(algo: Algorithm) -> Algorithm:
    """Add an algorithm; a name or alias may name only one algorithm."""
    for spelling in (algo.name, *algo.aliases):
        other = lookup(spelling)
        if other is not None and other.name != algo.name:
            raise ValueError(f"{spelling!r} already names {other.name}")
    ALGORITHMS[algo.name] = algo
    return algo


def lookup(name: str) -> Algorithm | None:
    """The algorithm with this name or alias (any case), else None."""
    for algo in ALGORITHMS.values():
        if name.lower() in (algo.name, *algo.aliases):
            return algo
    return None


def _spellings(name: str, key: str, table: dict[str, str]) -> tuple[str, ...]:
    """Every other spelling of ``key`` its config module accepts (one table of aliases)."""
    others = [key, *(alias for alias, target in table.items() if target == key)]
    return tuple(dict.fromkeys(s for s in others if s != name))


def _offline(name: str, key: str, summary: str, *, more: tuple[str, ...] = ()) -> Algorithm:
    return Algorithm(
        name,
        key,
        summary,
        TrainConfig,
        add_offline_arguments,
        run_train,
        _spellings(name, key, ALGO_ALIASES) + more,
    )


def _online(name: str, summary: str) -> Algorithm:
    return Algorithm(
        name,
        name,
        summary,
        OnlineConfig,
        add_online_arguments,
        run_online,
        _spellings(name, name, ONLINE_ALIASES),
        online=True,
    )


register(_offline("bc", "bc", "offline: behaviour cloning on the selected episodes"))
# `lmrl train --help` has long named it filtered-bc, a spelling the old algorithm lookup refused
register(
    _offline(
        "%bc",
        "pbc",
        "offline: filtered BC, behaviour cloning on the best episodes by "
        "return (--top-percent, 10 by default)",
        more=("filtered-bc",),
    )
)
register(
    _offline("mc", "mc", "offline: MC Returns, Q heads fit the return-to-go; value-guided decoding")
)
register(
    _offline(
        "ilql", "ilql", "offline: implicit language Q-learning (expectile V, double Q, targets)"
    )
)
register(_offline("qsft", "qsft", "offline: Q-SFT, Q-values as the fine-tuned LM's probabilities"))
register(_online("ppo", "online: PPO against the task simulator, from an --init checkpoint"))
register(
    _online(
        "online-filtered-bc",
        "online: rounds of rollouts from an --init checkpoint, BC on the best of each round",
    )
)


class _AnyCase(dict):
    """The ``train`` subcommands' name -> parser map: a name or alias in any case (``ILQL``)
    finds its parser, as the hand-written algorithm lookup of old did."""

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key) or (
            isinstance(key, str) and super().__contains__(key.lower())
        )

    def __getitem__(self, key: Any) -> Any:
        if not super().__contains__(key) and isinstance(key, str):
            key = key.lower()
        return super().__getitem__(key)


def add_train_command(
    subparsers: Any,
    parents: Iterable[argparse.ArgumentParser] = (),
    *,
    wrap: Callable[[Runner], Runner] | None = None,
) -> argparse.ArgumentParser:
    """``train`` with one subcommand per registered algorithm, each with its own flags and help;
    ``wrap`` (given by ``lmrl``) wraps each algorithm's runner."""
    parents = list(parents)
    offline = [a.name for a in ALGORITHMS.values() if not a.online]
    online = [a.name for a in ALGORITHMS.values() if a.online]
    summary = (
        f"train a policy: offline from the store ({', '.join(offline)}) or online "
        f"({', '.join(online)}); needs the train extra"
    )
    train = subparsers.add_parser(
        "train",
        parents=parents,
        help=summary.replace("%", "%%"),
        description=summary + ". `ALGO --help` lists its options.",
    )
    algos = train.add_subparsers(title="algorithms", metavar="ALGO", required=True)
    # argparse looks names up in this map (it is also the choices): swap in the any-case one
    algos._name_parser_map = algos.choices = _AnyCase()
    for algo in ALGORITHMS.values():
        p = algos.add_parser(
            algo.name,
            aliases=list(algo.aliases),
            parents=parents,
            help=algo.summary.replace("%", "%%"),
            description=algo.summary,
        )
        algo.add_arguments(p, algo.key)
        p.set_defaults(algo=algo.key, run=wrap(algo.run) if wrap else algo.run)
    return train


def add_reproduce_command(
    subparsers: Any, parents: Iterable[argparse.ArgumentParser] = ()
) -> argparse.ArgumentParser:
    """``reproduce TASK``: LMRL-Gym's Table 2 for a task (:mod:`training.reproduce.command`); it runs its
    ``train`` and ``eval`` commands with :func:`run_command`."""
    from training.reproduce.command import add_reproduce_command as add

    return add(subparsers, parents, main=run_command)


def run_command(argv: list[str]) -> int:
    """Run ``[--db DB] train ALGO ... | eval ...`` in this process (the ``lmrl`` subcommands)."""
    from data.store import Store

    parser = argparse.ArgumentParser(prog="lmrl")
    parser.add_argument("--db", default=None)
    sub = parser.add_subparsers(dest="command", required=True)
    add_train_command(sub)
    add_eval_command(sub)
    args = parser.parse_args(argv)
    store = Store(args.db)
    try:
        return int(args.run(args, store))
    finally:
        store.close()


def add_eval_command(
    subparsers: Any, parents: Iterable[argparse.ArgumentParser] = ()
) -> argparse.ArgumentParser:
    """``eval AGENT``: evaluate a checkpoint against its (or another) task, or any other agent
    (scripted policy, ``hf:``, ``http:``, ``guided:``) against ``--task``."""
    ev = subparsers.add_parser(
        "eval",
        parents=list(parents),
        help="evaluate a checkpoint, scripted policy or language model on a task "
        "(needs the train extra)",
    )
    add_eval_arguments(ev)
    ev.set_defaults(run=run_eval)
    return ev
