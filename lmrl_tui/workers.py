"""One error path for the app's background work.

Thread workers (``@work(thread=True, exit_on_error=False)``) do not catch their own failures: the
worker ends in the ``ERROR`` state and :class:`ReportsWorkerErrors` (mixed into the app and every
screen) shows the failure as the red toast registered for the worker's group, then calls
:meth:`ReportsWorkerErrors.worker_failed` so the node can put itself back in a usable state.
Successful results come back as typed messages that the worker posts (``post_message`` is
thread-safe), never through ``call_from_thread``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, cast

from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from textual.dom import DOMNode


@dataclass(frozen=True)
class ErrorToast:
    """How a failure is shown: a red toast with ``title``, for ``timeout`` seconds."""

    title: str
    timeout: float = 10
    with_type: bool = True
    """Start the text with the exception's class name (``KeyError: 'x'``); False: its message only."""
    in_place: bool = False
    """No toast: the node shows the failure itself in :meth:`ReportsWorkerErrors.worker_failed`
    (a dialog, under the field it concerns, keeping the form)."""

    def text(self, error: BaseException) -> str:
        """The toast's text for ``error``."""
        return f"{type(error).__name__}: {error}" if self.with_type else str(error)


UNEXPECTED = ErrorToast("Something went wrong")
"""For a worker that reports its errors but has no toast of its own (a slip, never a traceback)."""


def show_error(node: DOMNode, error: BaseException, toast: ErrorToast) -> None:
    """Show ``error`` as ``toast`` (the one way a failure reaches the person at the keyboard)."""
    node.notify(toast.text(error), title=toast.title, severity="error", timeout=toast.timeout)


class ReportsWorkerErrors:
    """Mixin for the app and its screens: failed workers become error toasts.

    ``WORKER_ERRORS`` maps a worker group to its toast. Workers that may fail in expected ways
    (a model that will not load, an engine that dies) are declared with ``exit_on_error=False``;
    the others keep Textual's default, where an error is a bug that ends the app with a traceback.
    """

    WORKER_ERRORS: ClassVar[Mapping[str, ErrorToast]] = {}

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        error = worker.error
        # exit_on_error workers have already taken the app down with a traceback.
        if event.state != WorkerState.ERROR or error is None or worker.exit_on_error:
            return
        toast = self.WORKER_ERRORS.get(worker.group, UNEXPECTED)
        if not toast.in_place:
            show_error(cast("DOMNode", self), error, toast)
        self.worker_failed(worker.group, error)

    def worker_failed(self, group: str, error: BaseException) -> None:
        """Called after a failed worker of ``group`` was reported; put the node back in order."""
