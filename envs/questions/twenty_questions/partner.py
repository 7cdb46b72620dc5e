"""Twenty Questions' embedded oracle (the knowledge is in :mod:`envs.questions.twenty_questions.data`).

The oracle maps a question to facts about the secret object and answers ``"Yes."`` or ``"No."``
(LMRL-Gym's output vocabulary):

* Words and phrases of the knowledge base (kinds, materials, colours, places, uses, parts,
  properties, abilities, the objects' names and synonyms) are found in the question in any
  inflection (``berries``, ``cutting``), with accents, case and punctuation ignored; extra
  synonyms (``living``, ``electric``, ``edible``, ``hold it in your hand`` ...) are built in.
* Verb phrases (``assets/actions.txt``) are matched first, in any inflection and with a few words
  between their words: ``Do you wear it on your feet?``, ``Does it give off light?``, ``Do you eat
  with it?`` (a person does it) versus ``Does it eat grass?`` (the object does it).
* A colour that is also an object's name is the colour unless an article makes it the object
  (``Is it orange?`` versus ``Is it an orange?``).
* An identity question (``Is it a ...?``) asks what the object is (an object, a kind, a category),
  not what it has or is used for (``Is it a lock?`` is not ``Is it used for locking?``); one that
  names something outside the list (``Is it a giraffe?``, ``Is it a rugby ball?``) is a wrong
  guess: ``"No."``, understood, ``Parsed.unlisted`` naming it.
* Sizes are against references: ``bigger than a breadbox`` (or a hand, a person, a house, or any
  object of the base), ``small``, ``huge`` ...
* Several facts are joined by *and*, or by *or* when the question says ``or``.
* ``not``/``non``/``never`` negate the question (``Is it not alive?``), except a negative opening
  (``Isn't it alive?``, ``Doesn't it fly?``), which asks the plain question.
* Naming an object is a guess (``Is it a kind of car?``, ``Car?``); naming it after a relation
  (``found in a car``, ``bigger than a car``) is not.
* Questions it cannot map (including wh-questions, which LMRL's oracle cannot answer either) get
  ``"No."`` and ``understood = False``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from envs.questions.task import OracleReply
from envs.questions.text import (
    STOPWORDS,
    Atom,
    Lexicon,
    Match,
    clean_text,
    fold,
    resolve,
    tokens,
)
from envs.questions.text.phrases import PERSONS, Phrase, match_phrases
from envs.questions.twenty_questions.data import PARTS, Thing, objects, read_actions
from envs.questions.twenty_questions.text import (
    COMPARE,
    COUNTERS,
    DISPLAY,
    NEGATORS,
    PRIORITY,
    REF_SIZES,
    RELATIONAL,
    SYNONYMS,
    TRIGGERS,
    WH,
    rephrase,
)


@cache
def actions() -> tuple[list[Phrase], dict[str, frozenset[int]]]:
    """The action phrases (longest first) and the objects each is true of."""
    return read_actions(objects())


@cache
def lexicon() -> Lexicon:
    lex = Lexicon()
    things = objects()
    for i, t in enumerate(things):
        for v in t.variants:
            lex.add(v, Atom("obj", i), ing=False)
    for cat in {t.category for t in things}:
        lex.add(cat, Atom("cat", cat))
    for t in things:
        for k in t.kinds:
            lex.add(k, Atom("kind", k))
        for rel, vals in t.facts.items():
            for v in vals:
                lex.add(v, Atom(rel, v), ing=rel in ("for", "can"))
                lex.add(DISPLAY.get(v, v), Atom(rel, v), ing=rel in ("for", "can"))
    for phrase, atom in SYNONYMS:
        lex.add(phrase, atom, ing=True)
    for (
        key,
        atoms,
    ) in lex.entries.items():  # "tool", "electronic": the kind or fact, not the category
        if any(a.rel == "cat" for a in atoms) and any(a.rel in ("kind", "is") for a in atoms):
            lex.entries[key] = [a for a in atoms if a.rel != "cat"]
    return lex


@dataclass(frozen=True)
class Parsed:
    """A question mapped to atoms (independent of the secret, so it is cached)."""

    atoms: tuple[Atom, ...]
    any_of: bool
    negated: bool
    target: int | None
    reason: str = ""
    unlisted: str | None = None
    """What an identity question names when it is no object of the base (``"rugby ball"``)."""


REWRITES = {
    ("can", "you"): ("you",),
    ("could", "you"): ("you",),
    ("can", "i"): ("i",),
    ("can", "people"): ("people",),
    ("can", "we"): ("we",),
    ("grow", "on"): ("found", "on"),
    ("grows", "on"): ("found", "on"),
    ("grow", "in"): ("found", "in"),
    ("grows", "in"): ("found", "in"),
    ("live", "in"): ("found", "in"),
    ("lives", "in"): ("found", "in"),
}
"""Word pairs rewritten before matching: "can you eat it" asks about the object, not its
abilities; "grows on trees" says where it is found."""


CONTAIN = frozenset("hold holds store stores contain contains keep keeps carry carries".split())
"""Verbs that ask what the object is for when a noun follows (``Does it hold books?``)."""
NOT_CONTENTS = frozenset({"it", "in", "on", "with", "you", "hand", "hands", "up", "together"})


def _rewrite(toks: list[str]) -> list[str]:
    toks = [
        "for" if t in CONTAIN and i + 1 < len(toks) and toks[i + 1] not in NOT_CONTENTS else t
        for i, t in enumerate(toks)
    ]
    out: list[str] = []
    i = 0
    while i < len(toks):
        pair = tuple(toks[i : i + 2])
        if pair in REWRITES:
            out.extend(REWRITES[pair])
            i += 2
        else:
            out.append(toks[i])
            i += 1
    return out


def _size_comparison(toks: list[str]) -> tuple[Atom | None, list[str]]:
    for i, w in enumerate(toks[:-1]):
        if w in COMPARE and toks[i + 1] == "than":
            rest = toks[i + 2 :]
            for n in (2, 1):
                ref = " ".join(rest[:n])
                if len(rest) >= n and ref in REF_SIZES:
                    return Atom("size", (COMPARE[w], REF_SIZES[ref])), toks[:i] + rest[n:]
            found = lexicon().scan(rest[:4])
            for m in found:
                obj = [a for a in m.atoms if a.rel == "obj"]
                if obj and m.start == 0:
                    rank = objects()[obj[0].value].rank
                    return Atom("size", (COMPARE[w], float(rank))), toks[:i] + rest[m.end :]
            return None, toks[:i]
    return None, toks


IDENTITY = re.compile(
    r"^(?:(?:is|are|was|could|would|might|can|must)\s+)?(?:it|this|that|they|the object|your object"
    r"|the thing|your thing)\s+(?:be\s+)?(?:a|an)\s+(?:(?:kind|type|sort|form|piece|pair) of\s+"
    r"(?:a\s+|an\s+)?)?(?P<x>.+)$"
)
"""A question asking what the object is: ``Is it a rugby ball?``, ``Could it be an orange?``."""
IDENTITY_RELS = frozenset({"obj", "kind", "cat"})
BARE_IDENTITY = re.compile(r"^(?:is|could|would|might|must)\s+it\s+(?:be\s+)?(?P<x>[a-z0-9 ]+)$")
"""``Is it apple juice?``: an identity question without an article."""
VAGUE_NOUNS = frozenset(
    "item items thing things object objects means form example member piece part bit product "
    "stuff good nice common popular real normal regular typical usual of".split()
)
"""Words of an identity question that name no kind (``a household item``, ``a good pet``)."""
CLAUSE = frozenset("or and not that which who with for in on used made than like as to".split())
_RAW = re.compile(r"[a-z0-9]+")
VERB_OPENERS = frozenset({"does", "do", "did", "can", "will", "would", "could", "has", "have"})
CLAUSE_WORDS = frozenset({"when", "while", "whenever", "if"})
PRONOUNS = {"they": "it", "them": "it", "these": "it", "those": "it"}


def _identity(question: str) -> str | None:
    """The named thing of an identity question (``"rugby ball"``), None for other questions."""
    words = _RAW.findall(fold(clean_text(question)).replace("'", ""))
    m = IDENTITY.match(" ".join(words))
    if m is None:
        return None
    x = m.group("x").split()
    if not 1 <= len(x) <= 4 or CLAUSE & set(x):
        return None
    return " ".join(x)


def _names_kind(named: str) -> bool:
    """Whether ``named`` is, as a whole, an object, kind or category (``stuffed animal``)."""
    head = tokens(named)
    scan = lexicon().scan(head)
    return (
        len(scan) == 1
        and scan[0].end - scan[0].start == len(head) > 1
        and any(a.rel in IDENTITY_RELS for a in scan[0].atoms)
    )


def _other_thing_of(question: str) -> str | None:
    """``apple juice`` of ``Is it apple juice?``: an object's name then a word no entry knows
    names another thing (a drink, a dish), never the object (nor its colour)."""
    m = BARE_IDENTITY.match(" ".join(_RAW.findall(fold(clean_text(question)).replace("'", ""))))
    head = tokens(m.group("x")) if m else []
    if not 2 <= len(head) <= 4 or CLAUSE & set(head):
        return None
    first = lexicon().scan(head)
    lead = first[0] if first else None
    if lead is None or lead.start != 0 or not any(a.rel == "obj" for a in lead.atoms):
        return None
    assert m is not None  # head is empty without a match
    return m.group("x") if _unknown_words(head[-1:]) else None


def _unknown_words(toks: list[str]) -> list[str]:
    """Content words of ``toks`` that no entry of the lexicon covers."""
    covered: set[int] = set()
    for m in lexicon().scan(toks):
        covered.update(range(m.start, m.end))
    return [
        t
        for i, t in enumerate(toks)
        if i not in covered and t not in STOPWORDS and t not in VAGUE_NOUNS
    ]


@lru_cache(maxsize=16384)
def parse(question: str) -> Parsed:
    question = rephrase(question)
    toks = [PRONOUNS.get(w, w) for w in tokens(clean_text(question))]
    if not toks:
        return Parsed((), False, False, None, "empty question")
    if toks[0] in WH:
        return Parsed((), False, False, None, "not a yes/no question")
    negated = any(w in NEGATORS for w in toks[2:]) or (
        toks[0] in NEGATORS or (len(toks) > 1 and toks[1] == "non")
    )
    phrases, _ = actions()
    found, used = match_phrases(toks, phrases)
    asked = _identity(question)
    if asked is not None and (tuple(tokens(asked)) in PARTS or _names_kind(asked)):
        found, used = [], []  # "Is it a caterpillar?": a guess, not "was it a caterpillar"
    atoms: list[Atom] = [Atom("does", v) for v in found]
    if used:
        toks = [t for i, t in enumerate(toks) if i not in used]
        cut = [i for i, t in enumerate(toks) if t in CLAUSE_WORDS]
        if cut:  # "Does it make you cry when you cut it?": the clause qualifies the phrase
            toks = toks[: cut[0]]
    named = None if found else _identity(question)
    if named is None and not found and _other_thing_of(question):
        return Parsed((), False, negated, None, unlisted=_other_thing_of(question))
    if named is not None:
        head = tokens(named)
        matches = lexicon().scan(head)
        last = matches[-1] if matches else None
        if (
            _unknown_words(head)
            or last is None
            or last.end != len(head)
            or not any(a.rel in IDENTITY_RELS for a in last.atoms)
        ):
            return Parsed((), False, negated, None, unlisted=named)
    if len(toks) > 2 and toks[0] in VERB_OPENERS and toks[1] in PERSONS and toks[1] != "you":
        toks = [toks[0], "you", *toks[2:]]  # "Do kids eat it?": a person, not what it is for
    toks = _rewrite(toks)
    size_atom, toks = _size_comparison(toks)
    if size_atom:
        atoms.append(size_atom)
    matches = lexicon().scan(toks)
    objs: list[tuple[Match, Atom]] = []
    kept: list[tuple[Match, Atom]] = []
    for m in matches:
        if m.end < len(toks) and toks[m.end] == "of" and toks[m.start] in COUNTERS:
            continue  # "a piece of", "a pair of": counters, as LMRL ignores them
        options = m.atoms
        if named is not None and m.end == len(toks):  # "Is it an orange?": what it is
            options = [a for a in m.atoms if a.rel in IDENTITY_RELS]
        elif (
            any(a.rel != "obj" for a in m.atoms)
            and m.end - m.start < len(toks)
            and (any(a.rel in ("color", "is") for a in m.atoms) or toks[0] in VERB_OPENERS)
        ):  # "Is it orange?": the colour; "Does it ring?": what it does, not the ring
            options = [a for a in m.atoms if a.rel != "obj"]
            if toks[0] in ("does", "do", "did", "will") and toks[m.start - 1] == "it":
                options = [a for a in options if a.rel == "can"] or options  # a verb: it rings
        atom = resolve(options, toks, m.start, m.end, TRIGGERS, PRIORITY)
        if atom.rel == "obj":
            prev = toks[m.start - 1] if m.start > 0 else ""
            if prev in RELATIONAL and not (
                prev == "of" and m.start > 1 and toks[m.start - 2] in COUNTERS
            ):
                continue  # "found in a car", "used with a pen": not a guess
            objs.append((m, atom))
        atoms.append(atom)
        kept.append((m, atom))
    for i in range(len(kept) - 1):  # "Does it have long ears?": the ears, whatever their length
        (ma, a), (mb, b) = kept[i], kept[i + 1]
        if a.rel in ("is", "size", "color") and b.rel == "has" and ma.end == mb.start:
            if any(w in ("have", "has", "with") for w in toks[: ma.start]):
                atoms.remove(a)
    any_of = "or" in toks
    target = None
    if len(objs) == 1 and not any_of and not negated and objs[0][0].end == len(toks):
        target = objs[0][1].value
    if not atoms:
        return Parsed((), False, negated, None, "no known words")
    return Parsed(tuple(atoms), any_of, negated, target)


def holds(atom: Atom, thing: Thing, index: int) -> bool:
    rel, value = atom.rel, atom.value
    if rel == "obj":
        ok = value == index
    elif rel == "cat":
        ok = thing.category == value
    elif rel == "kind":
        ok = value in thing.kinds
    elif rel == "size":
        op, ref = value
        r = thing.rank
        ok = {">": r > ref, "<": r < ref, ">=": r >= ref, "<=": r <= ref, "==": r == ref}[op]
    elif rel == "for":  # what it is for or holds: "Does it use paper?" (a printer has paper)
        ok = value in thing.facts.get("for", frozenset()) or value in thing.facts.get("has", ())
    elif rel == "does":
        ok = index in actions()[1][value]
    else:
        ok = value in thing.facts.get(rel, frozenset())
    return ok != atom.neg


def answer(question: str, secret: int) -> OracleReply:
    """The embedded oracle's reply to ``question`` about object ``secret``."""
    p = parse(question)
    if p.unlisted is not None:  # a guess of something that is not on the list: a wrong guess
        return OracleReply("No.", True, f"not on the list: {p.unlisted}")
    if not p.atoms:
        return OracleReply("No.", False, p.reason)
    thing = objects()[secret]
    results = [holds(a, thing, secret) for a in p.atoms]
    yes = any(results) if p.any_of else all(results)
    return OracleReply("Yes." if yes != p.negated else "No.", True)
