"""A dialogue task's ``state()`` as the chat view (:mod:`lmrl_tui.views.chat`) shows it: the
transcript's lines with their notes, what the partner knows, the progress line, whose turn it is;
and the filter of the guess list."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def chat_lines(state: dict[str, Any], roles: Sequence[str]) -> list[tuple[str, str, str]]:
    """``(role, text, note)`` for every message of the transcript, in order."""
    out: list[tuple[str, str, str]] = []
    for item in state.get("transcript", []):
        if "question" in item:
            out.append((roles[0], item["question"], ""))
            note = ""
            if item.get("correct"):
                note = "correct!"
            elif item.get("unlisted"):
                note = f"{item.get('guess')} is not on the list: a wrong guess"
            elif item.get("understood") is False:
                note = "not understood"
            elif item.get("normalised") and item.get("reply"):
                note = f"reply {item['reply']!r} read as {item['answer']!r}"
            elif item.get("normalised"):
                note = "reply normalised"
            out.append((roles[1] if len(roles) > 1 else "partner", item["answer"], note))
        else:
            out.append((item.get("role", "?"), item.get("visible", item.get("text", "")), ""))
    return out


def secret_lines(state: dict[str, Any]) -> list[str]:
    """What the partner knows, one line per fact."""
    secret = state.get("secret")
    if isinstance(secret, list):  # names of the hidden state entries
        secret = {k: state.get(k) for k in secret if isinstance(state.get(k), str)}
    if not isinstance(secret, dict):
        return []
    lines = []
    for key, value in secret.items():
        if key in ("word",) or value in (None, "", []):
            continue
        if isinstance(value, list):
            value = ", ".join(str(v) for v in value)
        elif isinstance(value, bool):
            value = "yes" if value else "no"
        lines.append(f"{key.replace('_', ' ')}: {value}")
    return lines


def filter_names(names: Sequence[str], query: str) -> list[str]:
    """The names containing every word of ``query`` (case-insensitive), in their order."""
    words = query.lower().split()
    return [n for n in names if all(w in n.lower() for w in words)]


def progress_line(state: dict[str, Any]) -> str:
    if "questions_left" in state:
        left = state["questions_left"]
        return (
            f"Questions asked: {state['questions_asked']} / {state['max_questions']}"
            f" · {left} left · return {state.get('return', 0):g}"
        )
    if "max_turns" in state:
        # Car Dealer: the exchanges done (a seller's line and the buyer's answer), as the side
        # panel's "Turn: n / cap" counts steps (its "turn", the seller's lines, was one ahead
        # while a line awaited the buyer)
        turn = state["texts"] // 2 if "texts" in state else state.get("turn", 0)
        return f"Turn {turn} / {state['max_turns']} · return {state.get('return', 0):g}"
    return ""


def to_act(state: dict[str, Any]) -> str | None:
    if state.get("done"):
        return None
    return state.get("to_act") or (
        state.get("turn") if isinstance(state.get("turn"), str) else None
    )
