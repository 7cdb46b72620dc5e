"""The app's own commands in the command palette (ctrl+p): a new episode of each task, the
episodes, the training runs, each task's ladder, and the export help.

Each command does what its key on the home screen does (posting the same requests to the app).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

import envs
from lmrl_tui.messages import BrowseRequested, NewEpisodeRequested, RunsRequested

Command = tuple[str, Callable[[], object], str]
"""(what the palette shows, what runs, its help line)."""


EXPORT_HELP = """\
# Export episodes

Run from a shell (the app can keep running; the store takes readers and writers at once):

```
lmrl export --task TASK --format jsonl -o out.jsonl  # ours, lossless (steps, infos, labels)
lmrl export --task TASK --format lmrl -o task.json  # LMRL-Gym's own episode files
lmrl export --task chess --format lmrl-bc -o bc.jsonl  # LMRL's chess BC pairs (chess, endgames)
```

The dataset options choose the episodes, as for `lmrl train`: `--source human|scripted|agent|import`,
`--player NAME`, `--status`, `--top-percent`, `--option key=value` (episodes logged with that task
option). `lmrl export --help` lists them all; `lmrl import FILE --format lmrl|jsonl` reads files back.
"""


def export_help() -> str:
    """The export help screen's text (the command line's options: ``lmrl export --help``)."""
    return EXPORT_HELP


class LmrlCommands(Provider):
    """The palette's lmrl-tui commands (see the module docstring)."""

    def commands(self, tasks: list[tuple[str, str]]) -> list[Command]:
        """The commands, with a new episode and a ladder per task of ``tasks`` (id, title)."""
        app = self.app
        out: list[Command] = [
            (
                "Browse episodes",
                partial(app.post_message, BrowseRequested()),
                "The stored episodes, their steps and labels",
            ),
            (
                "Training runs",
                partial(app.post_message, RunsRequested()),
                "Runs, their checkpoints and metrics",
            ),
            (
                "Train",
                partial(app.post_message, RunsRequested()),
                "Opens the training runs (start one with `lmrl train`)",
            ),
            (
                "Ladder",
                partial(self._ladder, None),
                "People and agents ranked by mean return, per task",
            ),
            (
                "Export help",
                self._export_help,
                "How to write the store's episodes as LMRL-Gym files",
            ),
        ]
        for task_id, title in tasks:
            out.append(
                (
                    f"New episode: {task_id}",
                    partial(app.post_message, NewEpisodeRequested(task_id)),
                    f"Play or watch {title}",
                )
            )
            out.append(
                (f"Ladder: {task_id}", partial(self._ladder, task_id), f"Who plays {title} best")
            )
        return out

    async def startup(self) -> None:
        # Importing every task module takes a moment: off the UI thread, once per palette.
        tasks = await asyncio.to_thread(lambda: [(t, envs.spec(t).title) for t in envs.ids()])
        self._commands = self.commands(tasks)

    def _ladder(self, task_id: str | None) -> None:
        from lmrl_tui.screens.ladder import LadderScreen

        self.app.push_screen(LadderScreen(task_id))

    def _export_help(self) -> None:
        from lmrl_tui.screens.info import HelpScreen

        self.app.push_screen(HelpScreen(export_help()))

    async def discover(self) -> Hits:
        for name, run, help_text in self._commands:
            if not name.startswith("New episode") and not name.startswith("Ladder:"):
                yield DiscoveryHit(name, run, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, run, help_text in self._commands:
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), run, help=help_text)
