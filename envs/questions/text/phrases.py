"""Verb phrases (:class:`Phrase`) for the question tasks' oracles: a rough :func:`stem` and an
in-order matcher that allows a few words between a phrase's words (``give off light`` matches
``give light``). A phrase may start with a subject marker: ``you`` (a person does it: ``Do you eat
with it?``, ``Can you climb it?``) or ``it`` (the object or place does it: ``Does it eat
grass?``); the marker is not matched as a word but checked against the words before the phrase.

Pure standard library; used by :mod:`envs.questions.twenty_questions.data` and
:mod:`envs.questions.twenty_questions.partner`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from envs.questions.text import tokens

# fmt: off
_IRREGULAR_VERBS = {
    "worn": "wear", "wore": "wear", "ate": "eat", "eaten": "eat", "flew": "fly", "flown": "fly",
    "gave": "give", "given": "give", "kept": "keep", "held": "hold", "rode": "ride",
    "ridden": "ride", "grew": "grow", "grown": "grow", "feet": "foot", "teeth": "tooth",
    "hung": "hang", "stood": "stand", "sat": "sit", "slept": "sleep", "took": "take",
    "taken": "take", "drank": "drink", "drunk": "drink", "threw": "throw", "thrown": "throw",
    "blew": "blow", "blown": "blow", "ran": "run", "told": "tell", "shown": "show", "fed": "feed",
    "dug": "dig", "swept": "sweep", "caught": "catch", "leaves": "leaf", "knives": "knife",
    "lying": "lie", "lay": "lay", "flows": "flow", "flowing": "flow", "flowed": "flow",
    "photos": "photo", "drove": "drive", "driven": "drive", "lit": "light", "mice": "mouse",
    "geese": "goose",
}
_UNDOUBLE = set("bdgmnprt")
PERSONS = frozenset({"you", "i", "we", "people", "someone", "person", "human", "humans", "one",
                     "kids", "kid", "children", "child", "adults", "adult", "everyone", "anyone",
                     "somebody", "anybody", "everybody", "girls", "boys", "girl", "boy", "babies",
                     "baby", "toddlers", "teenagers", "teens", "students", "men", "women",
                     "grownups", "families"})
"""Subjects that make a question ask what a person does (``Do people ... it?``)."""
# fmt: on
AUXILIARIES = frozenset(
    "do does did can could will would should may might must is are was were not ever usually "
    "often always really also".split()
)
MAX_GAP = 2
"""At most this many other words between two words of a phrase."""


def stem(word: str) -> str:
    """A rough stem, the same for a word's inflections (``gives``/``giving``/``give``)."""
    w = _IRREGULAR_VERBS.get(word, word)
    if len(w) <= 3:
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("ing") and len(w) > 5:
        w = w[:-3]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] in _UNDOUBLE:
            w = w[:-1]
    elif w.endswith("ed") and len(w) > 4:
        w = w[:-2]
        if len(w) > 2 and w[-1] == w[-2] and w[-1] in _UNDOUBLE:
            w = w[:-1]
    elif w.endswith(("ches", "shes", "sses", "xes", "zes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if w.endswith("y") and len(w) > 3:  # "movies" -> "movy", "movie" -> "movi": one stem
        w = w[:-1] + "i"
    return w


@dataclass(frozen=True)
class Phrase:
    words: tuple[str, ...]
    """Stems, in order."""
    subject: str
    """``"you"``, ``"it"`` or ``""`` (any)."""
    value: str
    """The fact it stands for (its first spelling)."""


def make_phrase(
    text: str, value: str, tokenize: Callable[[str], list[str]] = tokens
) -> Phrase | None:
    toks = list(tokenize(text))
    subject = ""
    if toks and toks[0] in ("you", "it") and len(toks) > 1:
        subject, toks = toks[0], toks[1:]
    if not toks:
        return None
    return Phrase(tuple(stem(t) for t in toks), subject, value)


def _find(
    words: Sequence[str], stems: Sequence[str], used: set[int], start: int
) -> list[int] | None:
    """Positions of ``words`` in ``stems`` in order, from ``start``, gaps <= MAX_GAP, unused."""
    if not words:
        return []
    for i in range(start, len(stems)):
        if i in used or stems[i] != words[0]:
            continue
        rest = _find(words[1:], stems, used, i + 1) if len(words) > 1 else []
        if rest is None:
            continue
        if rest and rest[0] - i - 1 > MAX_GAP:
            continue
        return [i, *rest]
    return None


def match_phrases(toks: Sequence[str], phrases: Iterable[Phrase]) -> tuple[list[str], list[int]]:
    """The values of the phrases found in ``toks`` (longest phrases first, no word used twice)
    and the positions of the words they used."""
    stems = [stem(t) for t in toks]
    present = set(stems)
    used: set[int] = set()
    found: list[str] = []
    for ph in phrases:
        if not present.issuperset(ph.words):
            continue
        start = 0
        while True:
            pos = _find(ph.words, stems, used, start)
            if pos is None:
                break
            person = any(t in PERSONS for t in toks[: pos[0]])
            before = [t for t in toks[: pos[0]] if t not in AUXILIARIES]
            other = bool(before) and before[-1] != "it"  # "Do monkeys eat it?": not it that eats
            if (ph.subject == "you" and not person) or (ph.subject == "it" and (person or other)):
                start = pos[0] + 1
                continue
            used.update(pos)
            if ph.value not in found:
                found.append(ph.value)
            break
    return found, sorted(used)


def ordered(phrases: Iterable[Phrase]) -> list[Phrase]:
    """Longest first (more words, then a subject marker), so specific phrases win."""
    return sorted(phrases, key=lambda p: (-len(p.words), p.subject == ""))
