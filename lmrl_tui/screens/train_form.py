"""The train form of the runs screen: an ``lmrl train`` command filled in field by field and
started as a detached process (:mod:`lmrl_tui.runs_control`); and the confirmation before a run
is stopped.

The form builds the command line and parses it with the real ``train`` parser (torch-free), so
it accepts exactly what ``lmrl train`` accepts; a bad value is explained under its field, an
error of the command as a whole under the form. For an offline algorithm it also counts the
episodes the dataset filters select (none: nothing to train on) before it starts the process.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Label, Static

import envs
from lmrl_tui import runs_control
from lmrl_tui.runs_control import Launch, algorithm_names, is_online, parse_train_argv
from lmrl_tui.screens.base import FORM_KEYS, LmrlScreen
from lmrl_tui.screens.episode_form import FormSelect
from lmrl_tui.screens.leave import ConfirmDialog
from lmrl_tui.workers import ErrorToast

SOURCES = ("human", "scripted", "agent", "import", "any")
STATUSES = ("finished", "abandoned", "in_progress", "any")
MODELS = ("tiny", "smollm2-135m")
DEFAULT_SOURCE = "logged"
"""The source choice that passes no ``--source`` (human, scripted and import: the logged data)."""
NUMBER_FIELDS: dict[str, tuple[str, type, bool]] = {
    # field id: (flag, type, positive only); blank fields pass no flag (the algorithm's default)
    "seed": ("--seed", int, False),
    "n-layer": ("--n-layer", int, True),
    "n-embd": ("--n-embd", int, True),
    "batch-size": ("--batch-size", int, True),
    "lr": ("--lr", float, True),
    "eval-episodes": ("--eval-episodes", int, False),
    "log-every": ("--log-every", int, True),
    "top-percent": ("--top-percent", float, True),
    "limit": ("--limit", int, True),
}
ONLINE_ONLY = {"init"}
OFFLINE_ONLY = {
    "model",
    "n-layer",
    "n-embd",
    "source",
    "status",
    "top-percent",
    "wins-only",
    "limit",
    "player",
}


class TrainForm(LmrlScreen, ModalScreen[Launch | None]):
    """Algorithm, task, steps, seed, model and size, dataset filters and the output folder; Start
    launches ``lmrl train`` and gives back its :class:`Launch` (escape: None)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="train.cancel"), *FORM_KEYS]
    LAST_FIELD = "out"
    AUTO_FOCUS = "#algo"
    WORKER_ERRORS = {"train-start": ErrorToast("Cannot start the run", in_place=True)}

    class Started(Message, bubble=False):
        def __init__(self, launch: Launch) -> None:
            super().__init__()
            self.launch = launch

    class Refused(Message, bubble=False):
        def __init__(self, field: str | None, text: str) -> None:
            super().__init__()
            self.field = field
            self.text = text

    def __init__(self, task_id: str | None = None) -> None:
        super().__init__()
        self.task_id = task_id if task_id in envs.ids() else "maze-fo"
        self.argv: list[str] = []
        """The command line last built (for the tests and the log)."""

    def _row(self, field: str, label: str, widget: Widget) -> ComposeResult:
        yield Horizontal(Label(label), widget, classes="row", id=f"{field}-row")
        yield Static("", id=f"{field}-error", classes="field-error")

    def compose(self) -> ComposeResult:
        algos = algorithm_names()
        with VerticalScroll(can_focus=False):
            yield Static("[b]New training run[/b] · `lmrl train`, in the background", id="title")
            yield Static(
                "enter or tab: next field · enter in the last field or Start: start · escape: cancel · "
                "blank fields: the algorithm's defaults",
                id="keys",
            )
            with Vertical(id="form"):
                yield from self._row(
                    "algo",
                    "Algorithm",
                    FormSelect([(a, a) for a in algos], value="bc", allow_blank=False, id="algo"),
                )
                yield from self._row(
                    "task",
                    "Task",
                    FormSelect(
                        [(f"{envs.spec(t).title} ({t})", t) for t in envs.ids()],
                        value=self.task_id,
                        allow_blank=False,
                        id="task",
                    ),
                )
                yield from self._row("steps", "Steps / rounds", Input("200", id="steps"))
                yield from self._row("seed", "Seed", Input("0", id="seed"))
                yield from self._row(
                    "model",
                    "Model",
                    Input("tiny", placeholder="tiny, smollm2-135m or a folder", id="model"),
                )
                yield from self._row(
                    "init",
                    "Init (online)",
                    Input(
                        placeholder="checkpoint to start from (ppo, online-filtered-bc)", id="init"
                    ),
                )
                yield from self._row(
                    "n-layer", "Tiny: layers", Input(placeholder="blank: 2", id="n-layer")
                )
                yield from self._row(
                    "n-embd", "Tiny: width", Input(placeholder="blank: 64", id="n-embd")
                )
                yield from self._row(
                    "batch-size", "Batch size", Input(placeholder="blank: 32", id="batch-size")
                )
                yield from self._row(
                    "lr", "Learning rate", Input(placeholder="blank: the default", id="lr")
                )
                yield from self._row(
                    "eval-episodes",
                    "Eval episodes",
                    Input(placeholder="blank: 32; 0: no final evaluation", id="eval-episodes"),
                )
                yield from self._row(
                    "log-every", "Log every", Input(placeholder="blank: 10 steps", id="log-every")
                )
                yield from self._row(
                    "source",
                    "Data source",
                    FormSelect(
                        [
                            ("logged (human, scripted, import)", DEFAULT_SOURCE),
                            *((s, s) for s in SOURCES),
                        ],
                        value=DEFAULT_SOURCE,
                        allow_blank=False,
                        id="source",
                    ),
                )
                yield from self._row(
                    "status",
                    "Episode status",
                    FormSelect(
                        [(s, s) for s in STATUSES], value="finished", allow_blank=False, id="status"
                    ),
                )
                yield from self._row(
                    "player", "Player", Input(placeholder="blank: any player", id="player")
                )
                yield from self._row(
                    "top-percent",
                    "Top %",
                    Input(placeholder="blank: all (%bc: 10)", id="top-percent"),
                )
                yield from self._row(
                    "wins-only", "Wins only", Checkbox("successful episodes only", id="wins-only")
                )
                yield from self._row(
                    "limit", "Episode limit", Input(placeholder="blank: no limit", id="limit")
                )
                yield from self._row(
                    "extra",
                    "More flags",
                    Input(
                        placeholder="any other `lmrl train` flags, e.g. --max-length 128",
                        id="extra",
                    ),
                )
                yield from self._row(
                    "out",
                    "Output folder",
                    Input(placeholder="blank: runs/ALGO-TASK-TIME beside the store", id="out"),
                )
            yield Static("", id="error")
            with Horizontal(id="buttons"):
                yield Button("Start", variant="primary", id="start")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self._show_fields()

    def on_select_changed(self, event: FormSelect.Changed) -> None:
        if event.select.id == "algo":
            self._show_fields()

    def _show_fields(self) -> None:
        online = is_online(str(self.query_one("#algo", FormSelect).value))
        for name in ONLINE_ONLY | OFFLINE_ONLY:
            self.query_one(f"#{name}-row").display = online == (name in ONLINE_ONLY)

    def _value(self, name: str) -> str:
        return self.query_one(f"#{name}", Input).value.strip()

    def build(self) -> tuple[list[str], Path, dict[str, str]]:
        """(the command line, the output folder, errors by field) from the fields."""
        algo = str(self.query_one("#algo", FormSelect).value)
        task = str(self.query_one("#task", FormSelect).value)
        online = is_online(algo)
        errors: dict[str, str] = {}
        flags: list[str] = []
        steps = self._value("steps")
        if not steps.isdigit() or int(steps) < 1:
            errors["steps"] = "a whole number of at least 1"
        else:
            flags += ["--rounds" if online else "--max-steps", steps]
        for name, (flag, typ, positive) in NUMBER_FIELDS.items():
            text = self._value(name)
            if not text or not self.query_one(f"#{name}-row").display:
                continue
            try:
                number = typ(text)
            except ValueError:
                errors[name] = f"{'a whole number' if typ is int else 'a number'}, not {text!r}"
                continue
            if number < 0 or (positive and number == 0):
                errors[name] = "must be above 0" if positive else "must not be negative"
                continue
            flags += [flag, text]
        if online:
            if not self._value("init"):
                errors["init"] = f"{algo} starts from a checkpoint (e.g. a bc run's folder)"
            flags += ["--init", self._value("init")]
        else:
            model = self._value("model") or "tiny"
            if model not in MODELS and not Path(model).expanduser().exists():
                errors["model"] = (
                    f"tiny, smollm2-135m or an existing folder; {model!r} is none of them"
                )
            flags += ["--model", model]
            source = str(self.query_one("#source", FormSelect).value)
            if source != DEFAULT_SOURCE:
                flags += ["--source", source]
            flags += ["--status", str(self.query_one("#status", FormSelect).value)]
            if self._value("player"):
                flags += ["--player", self._value("player")]
            if self.query_one("#wins-only", Checkbox).value:
                flags.append("--wins-only")
        try:
            flags += shlex.split(self._value("extra"))
        except ValueError as e:
            errors["extra"] = str(e)
        db = self.lmrl_app.db_path
        out = Path(self._value("out")).expanduser() if self._value("out") else None
        out = (out or runs_control.default_out_dir(db, algo, task)).resolve()
        if (out / "metrics.jsonl").exists() or (out / runs_control.LAUNCH_FILE).exists():
            errors["out"] = "this folder already holds a run: choose another (or leave it blank)"
        argv = runs_control.train_argv(db, algo, task, out, flags)
        return argv, out, errors

    def _show_errors(self, errors: dict[str, str], overall: str = "") -> None:
        """Each field's error under it; the cursor goes to the first field in error (scrolled into
        view), so that the person sees what to fix and can type at once."""
        first = None
        for err in self.query(".field-error"):
            name = (err.id or "").removesuffix("-error")
            err.update(errors.get(name, ""))
            err.set_class(name in errors, "-shown")
            if name in errors and first is None:
                first = name
        self.query_one("#error", Static).update(overall)
        if first is not None:
            field = self.query_one(f"#{first}")
            if field.display and field.focusable:
                field.focus()
                self.call_after_refresh(self.query_one(f"#{first}-error").scroll_visible)
        elif overall:  # below the fields
            self.reveal_form_error()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the last field (the output folder) starts (in the others it moves on:
        ``action_form_enter``)."""
        if event.input.id == self.LAST_FIELD:
            self.action_start()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "cancel":
            self.dismiss(None)
        else:
            self.action_start()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def action_start(self) -> None:
        argv, out, errors = self.build()
        self.argv = argv
        if errors:
            self._show_errors(errors, "Fix the fields marked above.")
            return
        # argv: python -m lmrl_tui.cli --db DB train ...; the parser takes what follows the module
        problem = parse_train_argv(argv[3:])
        if problem is not None:
            self._show_errors({}, f"lmrl train refuses it: {problem}")
            return
        self._show_errors({}, "Checking the dataset…")
        self.query_one("#start", Button).disabled = True
        self._start(argv, out)

    @work(thread=True, exclusive=True, group="train-start", exit_on_error=False)
    def _start(self, argv: list[str], out: Path) -> None:
        from training.cli import build_parser

        args = build_parser("lmrl").parse_args(argv[3:])
        if not is_online(args.algo):
            from data.datasets import select_episode_ids
            from training.args import dataset_query

            n = len(select_episode_ids(self.lmrl_app.store, dataset_query(args)))
            if n == 0:
                self.post_message(
                    self.Refused(
                        "source",
                        f"no stored {args.task} episodes match these "
                        "filters: generate or play some first (`lmrl generate`)",
                    )
                )
                return
        self.post_message(self.Started(runs_control.start(argv, out)))

    def on_train_form_refused(self, message: Refused) -> None:
        self.query_one("#start", Button).disabled = False
        self._show_errors({message.field: message.text} if message.field else {}, message.text)

    def on_train_form_started(self, message: Started) -> None:
        self.dismiss(message.launch)

    def worker_failed(self, group: str, error: BaseException) -> None:
        self.query_one("#start", Button).disabled = False
        self._show_errors({}, f"Cannot start the run: {error}")


class StopDialog(ConfirmDialog):
    """Stop the run (True) or keep it running (False)?"""

    BINDINGS = [
        Binding("escape,n", "choose(False)", "Keep running", id="stop.keep"),
        Binding("y", "choose(True)", "Stop it", id="stop.stop"),
    ]
    AUTO_FOCUS = "#keep"
    YES = ("Stop it (y)", "error", "stop")
    NO = ("Keep running (n)", "keep")


def describe_launch(launch: Launch, alive: bool) -> str:
    """One line on a launched process."""
    state = "running" if alive else "ended"
    return f"process {launch.pid} ({state}), log: {launch.log}"
