"""``lmrl play TASK [--as ROLE] [--vs WHO] [--seed N] [--option KEY=VALUE ...]``: the app opened
straight into one configured episode (``lmrl serve`` takes the same flags, so every annotator of a
campaign gets the same episode).

The flags become the new-episode dialog's fields, and the dialog starts at once: a choice that
does not work (an unknown checkpoint, a bad option) is explained under its field, with the form
kept, exactly as when a person fills it in. Nothing here imports textual or torch.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from lmrl_tui.play_fields import PlayFlagsError, play_fields  # noqa: F401 - importable here too

PAIRED = "paired"
"""``--vs paired``: another person on this store (a browser, a terminal), one side each."""

if TYPE_CHECKING:  # the plain ``lmrl`` imports this module: it must stay light
    from lmrl_tui.starting import PlayRequest


def add_play_command(
    subparsers: Any, parents: list[argparse.ArgumentParser]
) -> argparse.ArgumentParser:
    """``lmrl play``: the app, opened straight into one configured episode."""
    p = subparsers.add_parser(
        "play",
        parents=parents,
        help="open the app straight into one configured episode "
        "(lmrl play twenty-questions --as oracle --vs strong --option secret=guitar)",
    )
    add_play_arguments(p, required=True)
    p.add_argument("--player", default=argparse.SUPPRESS, help="your player name in the app")
    p.set_defaults(run=run_app, needs_store=True)
    return p


def run_app(args: argparse.Namespace, store: Any) -> int:
    """The app (``lmrl``), or the app opened into the episode of ``lmrl play``'s flags (checked
    first: flags that do not fit the task are one line and exit status 1)."""
    from lmrl_tui.app import make_app

    start = play_request(args) if args.command == "play" else None
    app = make_app(store, player=getattr(args, "player", None), ask_player=True, start=start)
    app.freeze_after_start = True
    app.run()
    return 0


def add_play_arguments(p: argparse.ArgumentParser, *, required: bool) -> None:
    """The flags of ``lmrl play`` (``required``: the task is); ``lmrl serve`` adds them optional."""
    from envs.core.options import options_help
    from lmrl_tui.cli.argtypes import seed as seed_type
    from training.args import task_option

    if required:
        p.add_argument("task", help="the task id (lmrl tasks lists them)")
    else:
        p.add_argument(
            "--task",
            dest="task",
            default=None,
            help="open every browser session straight into an episode of this task (with the flags below)",
        )
    p.add_argument(
        "--as",
        dest="as_role",
        default=None,
        metavar="ROLE",
        help="the side the person plays (default: the agent's side: the guesser, the seller, White); "
        "e.g. oracle or buyer",
    )
    p.add_argument(
        "--vs",
        dest="vs",
        default=None,
        metavar="WHO",
        help="who plays the other side: built-in (the task's own partner, the default), person "
        "(hot-seat), paired (another person on this store, in a browser or a terminal: "
        "twenty-questions, guess-city, car-dealer; without --as, either side), a scripted policy (strong, behaviour, random: when you play the partner side), "
        "a checkpoint folder, hf:MODEL or http:MODEL@BASE_URL",
    )
    p.add_argument(
        "--seed",
        dest="play_seed",
        type=seed_type,
        default=None,
        metavar="N",
        help="the episode's seed (default: random)",
    )
    p.add_argument(
        "--option",
        dest="play_options",
        type=task_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="task option (repeatable) · " + " · ".join(options_help().splitlines()),
    )


def play_request(args: argparse.Namespace) -> PlayRequest | None:
    """The episode the flags ask for (None when no task is named: ``lmrl serve`` without
    ``--task``); raises :class:`PlayFlagsError` for flags that do not fit the task."""
    from lmrl_tui.starting import PlayRequest

    task_id = getattr(args, "task", None)
    if task_id is None:
        if (
            getattr(args, "as_role", None)
            or getattr(args, "vs", None)
            or getattr(args, "play_options", None)
        ):
            raise PlayFlagsError("--as, --vs and --option need --task")
        return None
    if args.vs == PAIRED:  # another person, paired through the store
        from data.pairing import ANY_SIDE, check_side

        side = args.as_role or ANY_SIDE
        try:
            check_side(task_id, side)
        except ValueError as e:
            raise PlayFlagsError(str(e)) from None
        options = dict(args.play_options)
        return PlayRequest(task_id, args.play_seed, {}, pair=side, options=options)
    return PlayRequest(
        task_id, args.play_seed, play_fields(task_id, args.as_role, args.vs, args.play_options)
    )


def play_argv(args: argparse.Namespace) -> tuple[str, ...]:
    """The ``lmrl play`` arguments that open the episode of ``args`` (``lmrl serve --task``: each
    browser session's app runs them); () without a task."""
    if getattr(args, "task", None) is None:
        return ()
    from envs.core.options import show_value

    argv = ["play", args.task]
    for flag, value in (("--as", args.as_role), ("--vs", args.vs), ("--seed", args.play_seed)):
        if value is not None:
            argv += [flag, str(value)]
    for key, value in args.play_options:
        argv += ["--option", f"{key}={show_value(value)}"]
    return tuple(argv)
