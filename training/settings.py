"""Documented config fields (no torch): :func:`setting` makes a dataclass field that carries its
``--help`` line, which :func:`training.args.add_config_arguments` turns into a flag."""

from __future__ import annotations

from dataclasses import MISSING, field
from typing import Any


def setting(default: Any = MISSING, doc: str = "", *, factory: Any = MISSING, flag: bool = True,
            switch: bool = False) -> Any:
    """A config field with its help line (``metadata["help"]``).

    ``flag=False``: the command line sets it through its own argument (``--task``, ``--option``
    ...), not a generated ``--name`` flag; ``switch=True``: a bare ``--name`` sets it to True."""
    meta = {"help": doc, "flag": flag, "switch": switch}
    if factory is not MISSING:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)
