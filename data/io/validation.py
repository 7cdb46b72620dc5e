"""What an imported episode may hold: every field is checked against the store's schema before
anything is written (``lmrl import``).

:func:`check_record` checks, and normalises, an :class:`~data.records.EpisodeRecord` as our
JSONL reader or a task's LMRL codec built it: types (text, whole numbers, finite numbers, flags,
JSON objects), seeds within SQLite's 64-bit integers, a known task, a known status, source and
step role, steps that end only at the last one, a finished episode that ends terminated or
truncated, labels that name a step of the episode. The small checkers (:func:`text`,
:func:`number`, :func:`flag`, :func:`fields` ...) are what the codecs use on LMRL's own fields.
A failed check raises :class:`FieldError`, whose message names the field and says what it must
be: ``steps[3].reward must be a finite number, not NaN``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Mapping
from datetime import datetime
from functools import cache
from typing import Any, NoReturn

from data.records import EpisodeRecord, Who

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
"""SQLite's INTEGER range."""
STATUSES = ("finished", "in_progress", "abandoned")
SOURCES = ("human", "scripted", "agent", "import")
LABEL_KEYS = ("step_idx", "label", "value", "author", "created_at")


class FieldError(ValueError):
    """A value outside the schema; the message names the field and what it must be."""


_CONTAINERS: dict[type, str] = {dict: "an object", list: "a list"}


def show(v: Any) -> str:
    """A value as an error message shows it: JSON's spelling, long values cut short."""
    if v is None or isinstance(v, bool):
        return json.dumps(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return ("Infinity" if v > 0 else "-Infinity") if math.isinf(v) else repr(v)
    if isinstance(v, int):
        digits = f"{v}" if v.bit_length() < 1000 else "a very long number"
        return digits if len(digits) <= 24 else f"{digits[:12]}... ({len(digits)} digits)"
    if isinstance(v, str):
        return repr(v) if len(v) <= 40 else repr(v[:40])[:-1] + "...'"
    return _CONTAINERS.get(type(v), type(v).__name__)


def fail(field: str, what: str, v: Any) -> NoReturn:
    raise FieldError(f"{field} must be {what}, not {show(v)}")


def _bound(n: int) -> str:
    return {INT_MIN: "-2**63", INT_MAX: "2**63-1"}.get(n, str(n))


# -- one value -------------------------------------------------------------------------------
def text(v: Any, field: str, *, empty: bool = True) -> str:
    """A string (of Unicode text: no lone surrogates); not blank unless ``empty``."""
    if type(v) is not str or (not empty and not v.strip()):
        fail(field, "a string" if empty else "a non-empty string", v)
    if not v.isascii():
        _unicode(v, field)
    return v


def opt_text(v: Any, field: str, *, empty: bool = True) -> str | None:
    if v is None:
        return None
    if type(v) is not str or (not empty and not v.strip()):
        fail(field, "a string or null" if empty else "a non-empty string or null", v)
    return text(v, field)


def _unicode(v: str, field: str) -> None:
    try:
        v.encode("utf-8")
    except UnicodeEncodeError as e:
        raise FieldError(
            f"{field} holds a lone surrogate (\\u{ord(v[e.start]):04x}), not text"
        ) from None


def whole(v: Any, field: str, lo: int = INT_MIN, hi: int = INT_MAX, *, null: bool = False) -> int:
    """A JSON whole number (not a boolean, not 1.0) from ``lo`` to ``hi``."""
    if type(v) is not int or not lo <= v <= hi:
        fail(
            field,
            f"a whole number from {_bound(lo)} to {_bound(hi)}" + (" or null" if null else ""),
            v,
        )
    return v


def number(v: Any, field: str) -> float:
    """A finite number (an int or a float; not a boolean, NaN or +-Infinity) as a float."""
    if type(v) is float:
        if v - v == 0.0:  # false for NaN and the infinities
            return v
    elif type(v) is int:
        try:
            return float(v)
        except OverflowError:
            pass
    fail(field, "a finite number", v)


def flag(v: Any, field: str, *, null: bool = False) -> bool:
    """``true``/``false``, or 0/1 as the store writes them."""
    if v is True or v is False:
        return v
    if type(v) is int and v in (0, 1):
        return bool(v)
    fail(field, "true, false, 0 or 1" + (" (or null)" if null else ""), v)


def opt_flag(v: Any, field: str) -> bool | None:
    return None if v is None else flag(v, field, null=True)


def choice(v: Any, field: str, options: Collection[str], what: str = "") -> str:
    if type(v) is not str:
        fail(field, "a string", v)
    if v not in options:
        fail(field, f"one of {', '.join(options)}{what}", v)
    return v


def json_object(v: Any, field: str) -> dict[str, Any]:
    """A JSON object (null reads as ``{}``) that the store can write: no NaN or Infinity inside."""
    if v is None:
        return {}
    if type(v) is not dict:
        fail(field, "a JSON object", v)
    if v:
        try:
            dumped = json.dumps(v, ensure_ascii=False, allow_nan=False)
        except ValueError:
            raise FieldError(f"{field} must be a JSON object without NaN or Infinity") from None
        except RecursionError:
            raise FieldError(f"{field} is nested too deeply") from None
        except TypeError:
            fail(field, "a JSON object", v)
        if not dumped.isascii():
            _unicode(dumped, field)
    return v


def timestamp(v: Any, field: str) -> str | None:
    """An ISO 8601 time (as the store writes ``started_at``) or null."""
    if v is None:
        return None
    if type(v) is str and v.isascii():
        try:
            datetime.fromisoformat(v)
            return v
        except ValueError:
            pass
    fail(field, "an ISO 8601 time or null", v)


def fields(obj: Any, where: str, names: tuple[str, ...]) -> tuple[Any, ...]:
    """The values of the required ``names`` of the JSON object ``obj`` (``where`` names it)."""
    if type(obj) is not dict:
        fail(where, f"an object with {', '.join(names)}", obj)
    for name in names:
        if name not in obj:
            raise FieldError(f"{where} has no {name!r}")
    return tuple([obj[n] for n in names])


def unknown_fields(obj: Mapping[str, Any], where: str, known: Collection[str]) -> None:
    extra = obj.keys() - known
    if extra:
        raise FieldError(f"{where} has an unknown field {min(extra)!r}")


# -- a whole episode ---------------------------------------------------------------------------
@cache
def step_roles(task: str) -> tuple[str, ...]:
    """The roles a step of ``task`` may be recorded under: ``agent`` or the acting side's role."""
    import envs

    return tuple(dict.fromkeys(("agent", envs.spec(task).roles[0])))


def ends(rec: EpisodeRecord) -> bool:
    """The episode's last step is terminated or truncated."""
    return bool(rec.steps) and bool(rec.steps[-1].terminated or rec.steps[-1].truncated)


def check_record(rec: EpisodeRecord, tasks: Collection[str]) -> EpisodeRecord:
    """Check every field of ``rec`` (``tasks``: the known task ids) and normalise it in place
    (0/1 flags to booleans, whole-number rewards to floats, null objects to ``{}``)."""
    task = text(rec.task, "task")
    if task not in tasks:
        raise FieldError(f"task {task!r} is not a known task (see `lmrl tasks`)")
    whole(rec.task_version, "task_version", 1)
    if rec.seed is not None:
        whole(rec.seed, "seed", null=True)
    text(rec.first_observation, "first_observation")
    _check_sides(rec)
    choice(rec.source, "source", SOURCES)
    rec.options = json_object(rec.options, "options")
    rec.meta = json_object(rec.meta, "meta")
    choice(rec.status, "status", STATUSES)
    rec.success = opt_flag(rec.success, "success")
    timestamp(rec.started_at, "started_at")
    timestamp(rec.ended_at, "ended_at")
    _check_steps(rec, step_roles(task))
    if rec.status == "finished" and not ends(rec):
        if not rec.steps:
            raise FieldError("status is 'finished' but the episode has no steps")
        raise FieldError(
            "status is 'finished' but the last step is neither terminated nor truncated"
        )
    if rec.labels is not None:
        rec.labels = _checked_labels(rec.labels, len(rec.steps))
    return rec


def _check_sides(rec: EpisodeRecord) -> None:
    if not isinstance(rec.agent, Who):
        raise FieldError("the episode has no agent")
    text(rec.agent.kind, "agent_kind", empty=False)
    text(rec.agent.name, "agent_name", empty=False)
    if rec.partner is not None:
        text(rec.partner.kind, "partner_kind", empty=False)
        text(rec.partner.name, "partner_name", empty=False)
    opt_text(rec.player, "player", empty=False)


def _check_steps(rec: EpisodeRecord, roles: tuple[str, ...]) -> None:
    """The per-step checks, written out for speed: an import checks millions of steps."""
    steps = rec.steps
    if type(steps) is not list:
        fail("steps", "a list", steps)
    last = len(steps) - 1
    for i, s in enumerate(steps):
        a, o, r, t, u, info = s.action, s.observation, s.reward, s.terminated, s.truncated, s.info
        if type(a) is not str or not a.isascii():
            text(a, f"steps[{i}].action")
        if type(o) is not str or not o.isascii():
            text(o, f"steps[{i}].observation")
        if type(r) is not float or r - r != 0.0:
            s.reward = number(r, f"steps[{i}].reward")
        if t is not False and t is not True:
            s.terminated = t = flag(t, f"steps[{i}].terminated")
        if u is not False and u is not True:
            s.truncated = u = flag(u, f"steps[{i}].truncated")
        if (t or u) and i != last:
            raise FieldError(
                f"steps[{i}] is {'terminated' if t else 'truncated'} but is not the last step"
            )
        if type(info) is not dict or info:
            s.info = json_object(info, f"steps[{i}].info")
        if s.typed is not None:
            opt_text(s.typed, f"steps[{i}].typed")
        if s.think_ms is not None:
            whole(s.think_ms, f"steps[{i}].think_ms", 0, null=True)
        role = s.role
        if type(role) is not str or role not in roles:
            choice(role, f"steps[{i}].role", roles, f" for {rec.task}")


def _checked_labels(labels: Any, n_steps: int) -> list[Mapping[str, Any]]:
    if type(labels) is not list:
        fail("labels", "a list or null", labels)
    out: list[Mapping[str, Any]] = []
    for j, lab in enumerate(labels):
        where = f"labels[{j}]"
        if type(lab) is not dict:
            fail(where, "an object with a label", lab)
        unknown_fields(lab, where, LABEL_KEYS)
        if "label" not in lab:
            raise FieldError(f"{where} has no 'label'")
        idx = lab.get("step_idx")
        if idx is not None and (type(idx) is not int or not 0 <= idx < n_steps):
            steps = (
                f"a step of the episode (0 to {n_steps - 1})"
                if n_steps
                else "null (the episode has no steps)"
            )
            fail(f"{where}.step_idx", f"{steps} or null" if n_steps else steps, idx)
        text(lab["label"], f"{where}.label", empty=False)
        opt_text(lab.get("value"), f"{where}.value")
        opt_text(lab.get("author"), f"{where}.author")
        timestamp(lab.get("created_at"), f"{where}.created_at")
        out.append(dict(lab))
    return out
