"""Text matching for the question tasks' oracles: cleaning, folding, tokens, inflections, a
phrase lexicon that maps words of a question to facts (:class:`Atom`), and reading yes/no replies.
Verb phrases (a person eats it, it gives off light): :mod:`.phrases`.

Pure standard library; shared by :mod:`envs.questions.twenty_questions.partner` and
:mod:`envs.questions.guess_city.partner`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

QUESTION_LIMIT = 500
"""The oracle reads at most this many characters of a question (LMRL's T5 read 124 tokens)."""
REPLY_LIMIT = 2000

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_WORD = re.compile(r"[a-z0-9]+")
_YESNO = re.compile(r"\W*(yes|no)", re.IGNORECASE)
FORWARD_TRIGGERS = frozenset({"color", "lang"})
STOPWORDS = frozenset(
    "it is are was were be been being do does did can could would should will shall may might "
    "must have has had you he she they we i me us them there here what which who how why when "
    "where to of in on at for with and or not no yes by from as than then so if but also just "
    "very more most much many often usually ever all both either every thing things object "
    "something anything one kind type sort made used use found color colour colored coloured "
    "get got make go like about into out up off over".split()
)
"""Single words never taken as knowledge terms (they are the questions' glue and triggers)."""
ARTICLES = frozenset({"a", "an", "the", "your", "my", "some", "any", "this", "that", "its"})


def clean_text(text: str, limit: int = QUESTION_LIMIT) -> str:
    """One clean line: control characters to spaces, whitespace collapsed, stripped, cut."""
    t = _CONTROL.sub(" ", text[: limit * 4])
    return " ".join(t.split())[:limit]


def fold(text: str) -> str:
    """Lower-case ASCII-ish text: accents dropped (``São`` -> ``sao``), apostrophes unified."""
    t = unicodedata.normalize("NFKD", text)
    t = "".join(ch for ch in t if not unicodedata.combining(ch))
    return t.lower().replace("\u2019", "'").replace("`", "'")


def tokens(text: str) -> list[str]:
    """Words of ``text`` for matching: folded, ``n't``/``cannot`` split into ``not``, no articles."""
    t = fold(text)
    t = t.replace("can't", "can not").replace("won't", "will not").replace("cannot", "can not")
    t = re.sub(r"n't\b", " not", t)
    t = t.replace("'", "")
    return [w for w in _WORD.findall(t) if w not in ARTICLES]


# fmt: off
_IRREGULAR = {
    "knife": "knives", "leaf": "leaves", "mouse": "mice", "tooth": "teeth", "foot": "feet",
    "person": "people", "child": "children", "man": "men", "woman": "women", "goose": "geese",
    "shelf": "shelves", "fish": "fish", "sheep": "sheep", "wolf": "wolves", "life": "lives",
    "hoof": "hooves", "calf": "calves", "half": "halves", "news": "news", "glasses": "glasses",
}
# fmt: on
_IRREGULAR_BACK = {v: k for k, v in _IRREGULAR.items()}
_VOWELS = set("aeiou")


def singular(word: str) -> str:
    """A rough singular, used to give facts one canonical spelling (``doors`` -> ``door``)."""
    if word in _IRREGULAR_BACK:
        return _IRREGULAR_BACK[word]
    if len(word) <= 3 or word.endswith(("ss", "us", "is", "as")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def canonical(phrase: str) -> str:
    """A phrase's canonical spelling: its tokens, the last one singular."""
    toks = tokens(phrase)
    if not toks:
        return ""
    return " ".join([*toks[:-1], singular(toks[-1])])


def word_variants(word: str, ing: bool = True) -> set[str]:
    """Plural/singular (and with ``ing``, -ing) forms of a word (``berries``, ``cutting``/``cut``)."""
    out = {word}
    if word in _IRREGULAR:
        out.add(_IRREGULAR[word])
    if word in _IRREGULAR_BACK:
        out.add(_IRREGULAR_BACK[word])
    if len(word) < 3 or word.isdigit():
        return out
    if word.endswith("y") and word[-2] not in _VOWELS:
        out.add(word[:-1] + "ies")
    elif word.endswith(("s", "x", "z", "ch", "sh")):
        out.add(word + "es")
    else:
        out.add(word + "s")
    if word.endswith("ies") and len(word) > 4:
        out.add(word[:-3] + "y")
    elif word.endswith(("ses", "xes", "zes", "ches", "shes")):
        out.add(word[:-2])
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 4:
        out.add(word[:-1])
    if ing and word.endswith("ing") and len(word) > 5:
        stem = word[:-3]
        out.update({stem, stem + "s", stem + "e", stem + "es"})
        if len(stem) > 2 and stem[-1] == stem[-2]:
            out.update({stem[:-1], stem[:-1] + "s"})
    return out


class Atom(NamedTuple):
    """One checkable fact a question can ask about: ``(relation, value)``, maybe negated."""

    rel: str
    value: Any
    neg: bool = False


@dataclass
class Match:
    start: int
    end: int
    atoms: list[Atom]


@dataclass
class Lexicon:
    """Phrases (token tuples) -> the atoms they may mean; greedy longest-match scanning."""

    entries: dict[tuple[str, ...], list[Atom]] = field(default_factory=dict)
    longest: int = 1

    def add(
        self, phrase: str | Sequence[str], atom: Atom, inflect: bool = True, ing: bool = False
    ) -> None:
        """Map ``phrase`` (and its plural/singular, and -ing forms if ``ing``) to ``atom``."""
        toks = tuple(tokens(phrase) if isinstance(phrase, str) else phrase)
        if not toks or (len(toks) == 1 and toks[0] in STOPWORDS):
            return
        lasts = word_variants(toks[-1], ing) if inflect else {toks[-1]}
        for last in lasts:
            key = (*toks[:-1], last)
            if len(key) == 1 and last in STOPWORDS:
                continue
            lst = self.entries.setdefault(key, [])
            if atom not in lst:
                lst.append(atom)
            self.longest = max(self.longest, len(key))

    def scan(self, toks: Sequence[str]) -> list[Match]:
        out: list[Match] = []
        i = 0
        n = len(toks)
        while i < n:
            for size in range(min(self.longest, n - i), 0, -1):
                atoms = self.entries.get(tuple(toks[i : i + size]))
                if atoms:
                    out.append(Match(i, i + size, list(atoms)))
                    i += size
                    break
            else:
                i += 1
        return out


def resolve(
    atoms: Sequence[Atom],
    toks: Sequence[str],
    start: int,
    end: int,
    triggers: Mapping[str, frozenset[str]],
    priority: Sequence[str],
) -> Atom:
    """Pick the meaning of an ambiguous phrase: the relation whose trigger word ("made", "used",
    "in" ...) comes nearest before it in the question, else the first by ``priority``."""
    if len(atoms) == 1:
        return atoms[0]
    best: tuple[float, int] | None = None
    chosen = atoms[0]
    for a in atoms:
        trig = triggers.get(a.rel, frozenset())
        rank = priority.index(a.rel) if a.rel in priority else 99
        near: list[float] = [b for b in range(1, min(start, 8) + 1) if toks[start - b] in trig]
        if a.rel in FORWARD_TRIGGERS:  # "orange in colour": a trigger just after, a bit weaker
            near += [
                f + 0.5
                for f in range(1, 4)
                if end + f - 1 < len(toks) and toks[end + f - 1] in trig
            ]
        if near:
            key = (min(near), rank)
            if best is None or key < best:
                best, chosen = key, a
    if best is not None:
        return chosen
    return min(atoms, key=lambda a: priority.index(a.rel) if a.rel in priority else 99)


_SHORT_YES = frozenset({"y", "yes", "yeah", "yep"})
_SHORT_NO = frozenset({"n", "no", "nope", "nah"})


def short_yes_no(typed: str) -> str | None:
    """A person's short yes/no reply ("y", "Yep!", "no.") as "Yes." / "No."; None otherwise."""
    low = clean_text(typed).lower().rstrip(".! ")
    if low in _SHORT_YES:
        return "Yes."
    if low in _SHORT_NO:
        return "No."
    return None


def yes_no(reply: str) -> bool | None:
    """LMRL's reading of a reply: it starts with yes (True) or no (False), else None."""
    m = _YESNO.match(reply)
    if m is None:
        return None
    return m.group(1).lower() == "yes"


# fmt: off
_HEDGES = (
    "sometimes", "maybe", "perhaps", "possibly", "probably", "not sure", "unsure", "no idea",
    "dont know", "do not know", "dunno", "depends", "kind of", "sort of", "partly", "partially",
    "yes and no", "yes or no", "no or yes", "hard to say", "cannot say", "can not say",
    "not certain", "unclear", "either",
)
_YES_WORDS = frozenset({"y", "yes", "yeah", "yep", "yup", "yea", "correct", "right", "true",
                        "sure", "absolutely", "definitely", "indeed", "affirmative"})
_NO_WORDS = frozenset({"n", "no", "nope", "nah", "false", "never", "wrong", "negative"})
# fmt: on


def vague(reply: str) -> bool:
    """Whether a reply hedges (``"sometimes"``, ``"maybe"``, ``"no idea"``, ``"I don't know"``)."""
    text = " " + " ".join(tokens(reply)) + " "
    return any(f" {h} " in text for h in _HEDGES)


def reply_yes_no(reply: str) -> bool | None:
    """A reply to a yes/no question as evidence: True (yes), False (no), or None when it says
    neither. Stricter than :func:`yes_no`: the first word must be a yes or a no word
    (``"Yes, usually."`` is yes, ``"Nope"`` and ``"not really"`` are no, ``"North"`` is neither),
    and a hedge anywhere (``"sometimes"``, ``"maybe"``, ``"no idea"``, ``"I don't know"``, ``"yes
    and no"``) makes it neither."""
    words = tokens(reply)
    if not words or vague(reply):
        return None
    if words[0] in _YES_WORDS:
        return True
    if words[0] in _NO_WORDS or words[:2] == ["not", "really"]:
        return False
    return None
