"""Task options as a command line or a form writes them (``key=value``)."""

from __future__ import annotations

import json
from typing import Any


def parse_option(text: str) -> tuple[str, Any]:
    """A command line's task option ``key=value``; the value is read as JSON when it parses
    (``3``, ``-10.5``, ``true``), else kept as text (``words=small``)."""
    if "=" not in text:
        raise ValueError(f"task options look like key=value, not {text!r}")
    key, value = text.split("=", 1)
    if not key.strip():
        raise ValueError(f"task option {text!r} has no name")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        return key.strip(), value

