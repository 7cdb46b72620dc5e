"""Argument types of the ``lmrl`` command line (a bad value gets one plain sentence)."""

from __future__ import annotations

import argparse


def seed(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"the seed must be a whole number, not {text!r}") from None
    if not 0 <= v < 2**63:
        raise argparse.ArgumentTypeError("the seed must be between 0 and 2**63 - 1")
    return v


def positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive whole number, not {text!r}"
        ) from None
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, not {v}")
    return v
