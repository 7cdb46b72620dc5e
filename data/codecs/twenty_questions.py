"""LMRL-Gym's Twenty Questions format (``twenty-questions/train.json``, ``eval.json``).

One JSON array (``container = "json"``) of conversations::

    {"lines": ["Is it an animal? No.", "Is it a vehicle? Yes.", "Is it a car? Yes."],
     "correct": true, "word": ["Car"]}

Each line is the question (stripped; a ``?`` is added if it has none, as LMRL's asker
post-processing does) and the answer, joined by a space; LMRL's reader splits a line at its
**last** ``"? "``. ``correct`` says the last question guessed the object; ``word`` lists the
object's names. Import rebuilds the steps as LMRL's reader does (action = question + ``"\\n"``,
observation = answer + ``"\\n"``, reward −1, 0 for the last question when ``correct``); a
conversation that is not correct ends ``truncated`` at 20 lines and is otherwise kept unfinished
(``meta["partial"]``). The word is kept in ``meta["word"]`` so export gives it back.

Guess My City (:mod:`data.codecs.guess_city`) uses the same layout with ``word`` a
``"city,country"`` string.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import envs
from data.datasets import StoredEpisode
from data.formats import Codec, register_codec
from data.store import EpisodeRecord, StepRecord, Who

TASK_ID = "twenty-questions"
MAX_LINES = 20
_SECRET_OPTIONS = ("deterministic", "secret", "max_questions")


def question_line(action: str, observation: str) -> str:
    """One conversation line: ``"Is it an animal? No."``."""
    q = " ".join(action.split())
    if not q.endswith("?"):
        q += "?"
    return f"{q} {' '.join(observation.split())}"


def split_line(line: str) -> tuple[str, str]:
    """LMRL's ``split_question_answer``: split at the last ``"? "``."""
    if not isinstance(line, str) or "? " not in line:
        raise ValueError(f"a line must read 'question? answer', got {str(line)[:80]!r}")
    question, _, answer = line.rpartition("? ")
    return question + "?", answer


def secret_of(ep: StoredEpisode) -> dict[str, Any]:
    """The episode's secret as the task's ``state()["secret"]`` (imported word, step info, or
    recomputed from the recorded seed and options)."""
    meta = ep.episode.get("meta") or {}
    if isinstance(meta, dict) and "word" in meta:
        return {"word": meta["word"]}
    options = ep.episode.get("options") or {}
    opts = (
        {k: v for k, v in options.items() if k in _SECRET_OPTIONS}
        if isinstance(options, dict)
        else {}
    )
    name = None
    for s in reversed(ep.steps):
        info = s.get("info") or {}
        if isinstance(info, dict) and info.get("secret"):
            name = info["secret"]
            break
    task = envs.make(ep.task, **opts)
    if name is not None:
        task.reset(0, {"secret": name})
    else:
        task.reset(ep.episode.get("seed"))
    return task.state()["secret"]


def export_conversation(ep: StoredEpisode, word: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    lines = [question_line(s["action"], s["observation"]) for s in ep.steps]
    last = ep.steps[-1] if ep.steps else None
    info = (last.get("info") or {}) if last else {}
    correct = bool(
        last and last["terminated"] and (not isinstance(info, dict) or info.get("success", True))
    )
    secret = secret_of(ep)
    return {
        "lines": lines,
        "correct": correct,
        "word": secret["word"] if "word" in secret else word(secret),
    }


def import_conversation(item: Any, task: str, check_word: Callable[[Any], Any]) -> EpisodeRecord:
    if not isinstance(item, dict):
        raise TypeError("expected an object with lines, correct and word")
    lines, correct, word = item["lines"], bool(item["correct"]), check_word(item["word"])
    if not isinstance(lines, list):
        raise ValueError("lines must be a list of 'question? answer' strings")
    steps: list[StepRecord] = []
    for i, line in enumerate(lines):
        question, answer = split_line(line)
        last = i == len(lines) - 1
        win = last and correct
        cut = last and not correct and len(lines) >= MAX_LINES
        info: dict[str, Any] = {"success": win} if win or cut else {}
        steps.append(StepRecord(question + "\n", answer + "\n", 0.0 if win else -1.0,
                                terminated=win, truncated=cut, info=info))  # fmt: skip
    meta: dict[str, Any] = {"word": word}
    if steps and not (steps[-1].terminated or steps[-1].truncated):
        meta["partial"] = True
    return EpisodeRecord(
        task=task,
        task_version=envs.spec(task).version,
        seed=None,
        first_observation="Questions:\n",
        steps=steps,
        agent=Who("import", "lmrl"),
        source="import",
        success=correct,
        meta=meta,
    )


def _word_list(word: Any) -> list[str]:
    if isinstance(word, str):
        return [word]
    if not isinstance(word, list) or not all(isinstance(w, str) for w in word):
        raise ValueError("word must be a list of names")
    return list(word)


def export_episode(ep: StoredEpisode) -> dict[str, Any]:
    return export_conversation(ep, lambda secret: list(secret["variants"]))


def import_item(item: Any, task: str) -> EpisodeRecord:
    return import_conversation(item, task, _word_list)


register_codec(TASK_ID, Codec(export_episode, import_item, container="json"))
