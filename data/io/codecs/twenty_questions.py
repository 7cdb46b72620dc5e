"""LMRL-Gym's Twenty Questions format (``twenty-questions/train.json``, ``eval.json``).

One JSON array (``container = "json"``) of conversations::

    {"lines": ["Is it an animal? No.", "Is it a vehicle? Yes.", "Is it a car? Yes."],
     "correct": true, "word": ["Car"]}

Each line is the question (stripped; a ``?`` is added if it has none, as LMRL's asker
post-processing does) and the answer, joined by a space; LMRL's reader splits a line at its
**last** ``"? "``. ``correct`` says the last question guessed the object; ``word`` lists the
object's names. Import rebuilds the steps as LMRL's reader does (action = question + ``"\\n"``,
observation = answer + ``"\\n"``, reward −1, 0 for the last question when ``correct``); a
conversation that is not correct ends ``truncated`` at 20 lines. One that stops before that, or
whose last line is a question without the oracle's answer yet (``"Is it a car?"``), is unfinished:
``lmrl import`` keeps it with status ``abandoned`` and ``meta["partial"]``, so datasets and exports
leave it out unless asked (``--status abandoned``). The word is kept in ``meta["word"]`` so export
gives it back.

Guess My City (:mod:`data.io.codecs.guess_city`) uses the same layout with ``word`` a
``"city,country"`` string.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import envs
from data.datasets import StoredEpisode
from data.io.formats import Codec, register_codec
from data.io.validation import FieldError, fail, fields, flag, show, text
from data.store import EpisodeRecord, StepRecord, Who

TASK_ID = "twenty-questions"
MAX_LINES = 20
_SECRET_OPTIONS = ("deterministic", "secret", "max_questions")


def question_line(action: str, observation: str) -> str:
    """One conversation line: ``"Is it an animal? No."`` (just the question if it has no answer)."""
    q = " ".join(action.split())
    if not q.endswith("?"):
        q += "?"
    return f"{q} {' '.join(observation.split())}".rstrip()


def split_line(line: Any, field: str = "line", *, last: bool = False) -> tuple[str, str]:
    """LMRL's ``split_question_answer``: split at the last ``"? "``. The ``last`` line may be a
    question the oracle has not answered yet (answer ``""``)."""
    line = text(line, field)
    if "? " not in line:
        if last and line.rstrip().endswith("?"):
            return line.rstrip(), ""
        also = " (or, the last line, a question not answered yet)" if last else ""
        raise FieldError(f"{field} must read 'question? answer'{also}, not {show(line)}")
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
    """One LMRL conversation as an episode. One that is not ``correct`` and stops before
    :data:`MAX_LINES` lines, or whose last question has no answer yet, is unfinished (the import
    keeps it ``abandoned``, out of datasets by default)."""
    lines, correct, word = fields(item, "the item", ("lines", "correct", "word"))
    correct, word = flag(correct, "correct"), check_word(word)
    if type(lines) is not list:
        fail("lines", "a list of 'question? answer' strings", lines)
    steps: list[StepRecord] = []
    for i, line in enumerate(lines):
        last = i == len(lines) - 1
        question, answer = split_line(line, f"lines[{i}]", last=last)
        answered = not last or bool(answer.strip())
        win = last and correct and answered
        cut = last and not correct and answered and len(lines) >= MAX_LINES
        info: dict[str, Any] = {"success": win} if win or cut else {}
        steps.append(
            StepRecord(
                question + "\n",
                answer + "\n" if answered else "",
                0.0 if win else -1.0,
                terminated=win,
                truncated=cut,
                info=info,
            )
        )
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
        success=bool(steps) and steps[-1].terminated,
        meta=meta,
    )


def _word_list(word: Any) -> list[str]:
    if isinstance(word, str):
        return [text(word, "word", empty=False)]
    if (
        not isinstance(word, list)
        or not word
        or not all(isinstance(w, str) and w.strip() for w in word)
    ):
        fail("word", "a list of names", word)
    return [text(w, "word") for w in word]


def export_episode(ep: StoredEpisode) -> dict[str, Any]:
    return export_conversation(ep, lambda secret: list(secret["variants"]))


def import_item(item: Any, task: str) -> EpisodeRecord:
    return import_conversation(item, task, _word_list)


register_codec(TASK_ID, Codec(export_episode, import_item, container="json"))
