"""Import sqlite-utils without its optional numpy/pandas probe.

sqlite-utils imports numpy and pandas, when they are installed, only to recognise their scalar
types in inserted values. The store never inserts such values, and the two imports cost about a
third of a second of the app's start (they are installed with the ``train`` extra). So, when
neither is imported yet, hide them while sqlite-utils loads; they import normally afterwards.
"""

from __future__ import annotations

import sys

_HIDDEN = ("numpy", "pandas")
_hide = [name for name in _HIDDEN if name not in sys.modules]
for _name in _hide:
    sys.modules[_name] = None  # type: ignore[assignment]  # makes `import numpy` raise ImportError
try:
    from sqlite_utils import Database, Migrations
finally:
    for _name in _hide:
        if sys.modules.get(_name) is None:
            del sys.modules[_name]

__all__ = ["Database", "Migrations"]
