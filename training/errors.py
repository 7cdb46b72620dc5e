"""The one error type training raises for bad input (the CLI prints it and exits non-zero)."""

from __future__ import annotations


class TrainingError(Exception):
    """A training/evaluation input problem explained in one line for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(str(message).split()))
