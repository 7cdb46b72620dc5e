"""LMRL-Gym's Guess My City format (``guess-my-city/train.json``).

The Twenty Questions layout (:mod:`data.io.codecs.twenty_questions`): one JSON array of
``{"lines": ["What is the weather like? It is hot and humid all year.", ...], "correct": bool,
"word": "delhi,india"}``, where ``word`` is LMRL's ``"city,country"`` string in lower case.
"""

from __future__ import annotations

from typing import Any

from data.datasets import StoredEpisode
from data.io.codecs.twenty_questions import export_conversation, import_conversation
from data.io.formats import Codec, register_codec
from data.io.validation import fail, text
from data.store import EpisodeRecord

TASK_ID = "guess-city"


def _word(word: Any) -> str:
    if isinstance(word, list) and len(word) == 1:
        word = word[0]
    if not isinstance(word, str) or not word.strip():
        fail("word", "a 'city,country' string", word)
    return text(word, "word")


def export_episode(ep: StoredEpisode) -> dict[str, Any]:
    return export_conversation(ep, lambda secret: secret["word"])


def import_item(item: Any, task: str) -> EpisodeRecord:
    return import_conversation(item, task, _word)


register_codec(TASK_ID, Codec(export_episode, import_item, container="json"))
