"""The home screen's list of tasks, kept between starts so the table fills at once.

Listing the tasks means importing every task module and building each task once (word lists,
python-chess's tables, the 20Q knowledge): most of ``lmrl``'s start. What the home screen shows of
a task (:class:`TaskSummary`) is kept in a small JSON file with a fingerprint of the ``envs``
package (each file's size and modification time); a start whose fingerprint matches fills the table
from it, and the task modules are still imported in the background, which puts the table right
(and rewrites the file) if the tasks differ. A file that cannot be read or written is ignored.

The file is ``task-list.json`` in ``$LMRL_CONFIG_DIR`` when that is set (the tests' own folder),
else in the user cache directory. Without one (the first start after installing, or after the task
files changed) the list shipped with the package fills the table (:func:`load_shipped`; a test
keeps it equal to the tasks, ``python -m lmrl_tui.task_list`` writes it), and the background
check still puts it right.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import envs
from envs.core import TaskSpec
from lmrl_tui.prefs import CONFIG_ENV

FILE_NAME = "task-list.json"
SHIPPED = Path(__file__).with_name("shipped-task-list.json")
"""The task list of this version of the package, for a start without a kept one."""


@dataclass(frozen=True)
class TaskSummary:
    """What the home screen shows of a task (from its spec)."""

    id: str
    title: str
    summary: str
    roles: tuple[str, ...]
    max_turns: int
    reward_range: tuple[float, float]

    @classmethod
    def of(cls, spec: TaskSpec) -> TaskSummary:
        return cls(
            spec.id,
            spec.title,
            spec.summary,
            tuple(spec.roles),
            spec.max_turns,
            (float(spec.reward_range[0]), float(spec.reward_range[1])),
        )

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> TaskSummary:
        lo, hi = obj["reward_range"]
        return cls(
            str(obj["id"]),
            str(obj["title"]),
            str(obj["summary"]),
            tuple(map(str, obj["roles"])),
            int(obj["max_turns"]),
            (float(lo), float(hi)),
        )


def all_summaries() -> list[TaskSummary]:
    """Every registered task (imports every task module: slow, call it from a worker)."""
    return [TaskSummary.of(envs.spec(task_id)) for task_id in envs.ids()]


def cache_path() -> Path:
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env).expanduser() / FILE_NAME
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("lmrl-tui", appauthor=False)) / FILE_NAME


def fingerprint() -> str:
    """Changes when any file of the ``envs`` package does (size or modification time): the list of
    them itself (a few kB; no hashing module to import at start)."""
    root = Path(envs.__file__).parent
    lines = [str(root)]
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            st = os.stat(os.path.join(folder, name))
            lines.append(f"{os.path.relpath(folder, root)}/{name} {st.st_size} {st.st_mtime_ns}")
    return "\n".join(lines)


def load_cached(path: Path | None = None) -> list[TaskSummary] | None:
    """The task list kept by an earlier start with the same ``envs`` files, else None."""
    try:
        data = json.loads((path or cache_path()).read_text(encoding="utf-8"))
        if data.get("fingerprint") != fingerprint():
            return None
        return [TaskSummary.from_json(t) for t in data["tasks"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def save(summaries: list[TaskSummary], path: Path | None = None) -> None:
    """Keep the task list for the next start (quietly not, if the file cannot be written)."""
    path = path or cache_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps({"fingerprint": fingerprint(), "tasks": [asdict(s) for s in summaries]}),
            encoding="utf-8",
        )
        tmp.replace(path)
    except OSError:
        pass


def load_shipped(path: Path = SHIPPED) -> list[TaskSummary] | None:
    """The task list shipped with the package (None if it cannot be read)."""
    try:
        return [
            TaskSummary.from_json(t) for t in json.loads(path.read_text(encoding="utf-8"))["tasks"]
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_shipped(path: Path = SHIPPED) -> None:
    """Write the package's task list from the tasks themselves (after a task changes)."""
    data = {"tasks": [asdict(s) for s in all_summaries()]}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_shipped()
    print(f"wrote {SHIPPED}")
