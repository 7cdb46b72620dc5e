"""Import and export: LMRL-Gym's per-task JSON/JSONL formats (``lmrl``) and our own ``jsonl``.

``jsonl`` is lossless (:mod:`data.io.jsonl`): one JSON object per episode with every column of
the episode and its steps, so export -> import -> export reproduces the file. ``lmrl`` writes
exactly what LMRL-Gym's trainers read for the task; each task's codec lives in
``data/io/codecs/<task>.py`` and registers itself with :func:`register_codec`.

Import (:func:`import_episodes`) is all or nothing: every item is read, converted and checked
against the schema (:mod:`data.io.validation`; types, finite numbers, 64-bit seeds, known tasks,
statuses and roles, steps that end only at the last one, a finished episode that ends terminated
or truncated, labels on steps that exist), and everything is written in one transaction. The
first bad item stops it with a :class:`FormatError` of one line, ``line N: <field> must be ...``
(``item N (line L): ...`` in a file holding one JSON list), and nothing is written. An LMRL item
that stops before the end (its last step neither terminated nor truncated: a Twenty Questions
conversation without the final answer, a game cut short) is kept but imported ``abandoned`` with
``meta["partial"]``, so datasets and default exports leave it out; in our JSONL, where the status
is written out, ``finished`` on such an episode is refused instead.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import sqlite3
from collections.abc import Callable, Collection, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from data.datasets import DatasetQuery, StoredEpisode, load_episodes, select_episode_ids
from data.io.jsonl import episode_from_json, episode_to_json
from data.io.validation import (
    FieldError,
    check_record,
    ends,
)
from data.store import EpisodeRecord, Store, StoreError

FORMATS = ("jsonl", "lmrl")


class FormatError(ValueError):
    """A file that cannot be imported, with the line number and what is wrong."""


@dataclass(frozen=True)
class Codec:
    """One task's LMRL format. ``container`` is ``jsonl`` (one item per line) or ``json`` (a list)."""

    export_episode: Callable[[StoredEpisode], Any]
    import_item: Callable[[Any, str], EpisodeRecord]
    container: str = "jsonl"


_CODECS: dict[str, Codec] = {}
_codecs_loaded = False


def register_codec(task_id: str, codec: Codec) -> None:
    _CODECS[task_id] = codec


def codec(task_id: str) -> Codec:
    global _codecs_loaded
    if not _codecs_loaded:
        _codecs_loaded = True
        import data.io.codecs as pkg

        for mod in pkgutil.iter_modules(pkg.__path__):
            importlib.import_module(f"data.io.codecs.{mod.name}")
    try:
        return _CODECS[task_id]
    except KeyError:
        raise FormatError(f"no LMRL format is defined for task {task_id!r}") from None


def state_action_steps(ep: StoredEpisode) -> list[dict[str, Any]]:
    """LMRL's per-step list ``[{"state", "action", "reward", "done"}, ...]`` (maze-fo, chess),
    where ``state`` is the observation before the action."""
    states = [ep.episode["first_observation"]] + [s["observation"] for s in ep.steps]
    return [
        {
            "state": states[i],
            "action": s["action"],
            "reward": s["reward"],
            "done": bool(s["terminated"] or s["truncated"]),
        }
        for i, s in enumerate(ep.steps)
    ]


# -- export / import -------------------------------------------------------------------------
def export_episodes(store: Store, out: IO[str], fmt: str, query: DatasetQuery) -> int:
    """Write the episodes ``query`` selects to ``out``; returns how many were written."""
    if fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    ids = select_episode_ids(store, query)
    if fmt == "jsonl":
        n = 0
        for ep in load_episodes(store, ids):
            out.write(
                json.dumps(episode_to_json(ep, store.labels(ep.id)), ensure_ascii=False) + "\n"
            )
            n += 1
        return n
    if not query.task:
        raise FormatError("the lmrl format is per task: give --task")
    c = codec(query.task)
    items = (c.export_episode(ep) for ep in load_episodes(store, ids))
    if c.container == "json":
        data = list(items)
        json.dump(data, out, ensure_ascii=False)
        out.write("\n")
        return len(data)
    n = 0
    for item in items:
        out.write(json.dumps(item, ensure_ascii=False) + "\n")
        n += 1
    return n


_BOM = b"\xef\xbb\xbf"
_SPACE = re.compile(r"[ \t\n\r]*")
FLUSH_STEPS = 100_000
"""Validated episodes are buffered until they hold this many steps, then written into the
import's one transaction (opened at the first write: a small file holds the lock only to write)."""


def _decode_error(e: json.JSONDecodeError, doc: str, where: str) -> FormatError:
    if e.msg.startswith("Unterminated string") or e.pos >= len(doc.rstrip()):
        return FormatError(f"{where}: truncated JSON")
    return FormatError(f"{where}: not valid JSON ({e.msg} at column {e.colno})")


def _utf8(data: bytes, line: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        col = e.start - data.rfind(b"\n", 0, e.start)
        line += data.count(b"\n", 0, e.start)
        raise FormatError(
            f"line {line}: not UTF-8 text (byte 0x{data[e.start]:02x} at column {col})"
        ) from None


def _jsonl_items(f: IO[bytes]) -> Iterator[tuple[str, Any]]:
    """``("line N", value)`` for each non-blank line of a JSONL file."""
    for lineno, raw in enumerate(f, 1):
        line = _utf8(raw[3:] if lineno == 1 and raw.startswith(_BOM) else raw, lineno)
        if not line or line.isspace():
            continue
        where = f"line {lineno}"
        try:
            yield where, json.loads(line)
        except json.JSONDecodeError as e:
            raise _decode_error(e, line, where) from None
        except RecursionError:
            raise FormatError(f"{where}: JSON nested too deeply") from None
        except ValueError as e:  # e.g. an integer of more than 4300 digits
            raise FormatError(f"{where}: not valid JSON ({e})") from None


def _json_list_items(f: IO[bytes]) -> Iterator[tuple[str, Any]]:
    """``("item N (line L)", value)`` for each item of a file holding one JSON list."""
    data = f.read()
    doc = _utf8(data[3:] if data.startswith(_BOM) else data, 1)
    pos = _SPACE.match(doc).end()  # type: ignore[union-attr]
    line_at = lambda i: doc.count("\n", 0, i) + 1  # noqa: E731
    if pos == len(doc):
        return
    if doc[pos] != "[":
        raise FormatError(f"line {line_at(pos)}: expected a JSON list of episodes")
    decoder = json.JSONDecoder()
    pos = _SPACE.match(doc, pos + 1).end()  # type: ignore[union-attr]
    n, line, counted = 0, 1, 0
    while not doc.startswith("]", pos):
        n += 1
        line, counted = line + doc.count("\n", counted, pos), pos
        try:
            item, pos = decoder.raw_decode(doc, pos)
        except json.JSONDecodeError as e:
            raise _decode_error(e, doc, f"line {e.lineno}") from None
        except RecursionError:
            raise FormatError(f"item {n} (line {line}): JSON nested too deeply") from None
        except ValueError as e:
            raise FormatError(f"item {n} (line {line}): not valid JSON ({e})") from None
        yield f"item {n} (line {line})", item
        pos = _SPACE.match(doc, pos).end()  # type: ignore[union-attr]
        if doc.startswith(",", pos):
            pos = _SPACE.match(doc, pos + 1).end()  # type: ignore[union-attr]
        elif pos == len(doc):
            raise FormatError(f"line {line_at(pos)}: truncated JSON")
        elif not doc.startswith("]", pos):
            raise FormatError(
                f"line {line_at(pos)}: not valid JSON (expected ',' or ']' after item {n})"
            )
    end = _SPACE.match(doc, pos + 1).end()  # type: ignore[union-attr]
    if end != len(doc):
        raise FormatError(f"line {line_at(end)}: not valid JSON (extra data after the list)")


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).splitlines()) or type(e).__name__


def import_episodes(store: Store, path: str | Path, fmt: str, task: str | None = None) -> int:
    """Read a file into the store, all or nothing; returns how many episodes were written.

    Every item is converted and checked (:mod:`data.io.validation`) and all are written in one
    transaction: a bad item raises :class:`FormatError` (``line N: <what is wrong>``) and nothing
    is written. LMRL items whose last step is neither terminated nor truncated (a conversation
    that stops before the end, a game cut short) are kept but imported ``abandoned`` with
    ``meta["partial"]``, so datasets and exports leave them out by default.
    """
    path = Path(path)
    if fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    import envs

    tasks = frozenset(envs.ids())
    if task is not None and task not in tasks:
        raise FormatError(f"unknown task {task!r} (see `lmrl tasks`)")
    if fmt == "lmrl":
        if not task:
            raise FormatError("the lmrl format is per task: give --task")
        c = codec(task)
        convert: Callable[[Any], EpisodeRecord] = lambda item: _lmrl_record(c, item, task, tasks)  # noqa: E731
        items = _json_list_items if c.container == "json" else _jsonl_items
    else:
        convert, items = (lambda item: episode_from_json(item, tasks)), _jsonl_items
    if not path.exists():
        raise FormatError(f"no such file: {path}")
    if path.is_dir():
        raise FormatError(f"{path} is a directory, not a file")
    if not path.is_file():
        raise FormatError(f"{path} is not a regular file")
    try:
        with path.open("rb") as f, ExitStack() as transaction:
            return _write_all(store, items(f), convert, fmt, task, transaction)
    except OSError as e:
        raise FormatError(f"cannot read {path}: {e.strerror or e}") from None
    except sqlite3.OperationalError as e:
        raise StoreError(f"cannot write to {store.path} ({e}); nothing was imported") from None


def _write_all(
    store: Store,
    items: Iterator[tuple[str, Any]],
    convert: Callable[[Any], EpisodeRecord],
    fmt: str,
    task: str | None,
    transaction: ExitStack,
) -> int:
    """Convert and check every item, writing them in the one transaction entered on
    ``transaction`` at the first write; an error leaves the stack, which rolls it back."""
    total = steps = 0
    buf: list[EpisodeRecord] = []

    def flush() -> None:
        nonlocal total, steps
        if not total:  # the first write: take the write lock until the end
            transaction.enter_context(store.transaction())
        total += len(store.write_episodes(buf))
        buf.clear()
        steps = 0

    for where, item in items:
        try:
            rec = convert(item)
        except KeyError as e:
            raise FormatError(f"{where}: missing field {_one_line(e)}") from None
        except FieldError as e:
            raise FormatError(f"{where}: {_one_line(e)}") from None
        except _CODEC_ERRORS as e:
            what = f"an LMRL {task} item" if fmt == "lmrl" else "an episode of our JSONL"
            raise FormatError(f"{where}: not {what} ({_one_line(e)})") from None
        if task and rec.task != task:
            raise FormatError(f"{where}: episode of task {rec.task!r}, expected {task!r}")
        buf.append(rec)
        steps += len(rec.steps) + 1
        if steps >= FLUSH_STEPS:
            flush()
    if buf:
        flush()
    return total


_CODEC_ERRORS = (TypeError, ValueError, IndexError, AttributeError, ArithmeticError, RecursionError)


def _lmrl_record(c: Codec, item: Any, task: str, tasks: Collection[str]) -> EpisodeRecord:
    rec = c.import_item(item, task)
    if rec.status == "finished" and not ends(rec):
        rec.status = "abandoned"
        rec.meta = {**(rec.meta or {}), "partial": True}
    return check_record(rec, tasks)
