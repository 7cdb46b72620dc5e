"""Wordle's rules as fast, pure functions over word indices and bitsets (Python ints).

A :class:`Vocab` holds the answer list (the words a game may hide) and the allowed guesses (a
superset). Sets of answers are bitsets: bit ``k`` stands for ``answers[k]``. The tables here let a
task keep the set of answers still consistent with the feedback incrementally (a handful of
``&`` per guess, instead of re-filtering the list as LMRL-Gym does), and let the strong policy
compute the partition of the consistent set that a guess induces with bitset refinement.

Feedback is a code in ``0 .. 242``: five base-3 digits, the first letter most significant, with
``0`` = ``b`` (absent), ``1`` = ``y`` (present elsewhere), ``2`` = ``g`` (right place). Two rules:

* ``"real"`` (the ``wordle`` task): the real game. Greens first; then, left to right, a letter is
  yellow only while the answer still has unmatched copies of it, else black. Guess ``"salsa"``
  against ``"salty"`` gives ``g g g b b``.
* ``"lmrl"`` (the ``wordle-lmrl`` task): LMRL-Gym's rule, per position: green if equal, else
  yellow if the letter occurs anywhere in the answer, else black (``"salsa"``/``"salty"`` gives
  ``g g g y y``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

WORD_LENGTH = 5
ALPHABET = "abcdefghijklmnopqrstuvwxyz"
RULES = ("real", "lmrl")
SOLVED = 242  # g g g g g
FEEDBACK_LETTERS = "byg"


def _code_text(code: int) -> str:
    digits = []
    for _ in range(WORD_LENGTH):
        digits.append(FEEDBACK_LETTERS[code % 3])
        code //= 3
    return " ".join(reversed(digits)) + "\n"


FEEDBACK_TEXT: tuple[str, ...] = tuple(_code_text(c) for c in range(3**WORD_LENGTH))
"""Code -> LMRL observation text, e.g. ``"b y g b b\\n"``."""
TEXT_CODE = {t: c for c, t in enumerate(FEEDBACK_TEXT)}


def code_digits(code: int) -> list[int]:
    """Per-position marks of a feedback code (0 b, 1 y, 2 g), first letter first."""
    out = [0] * WORD_LENGTH
    for i in range(WORD_LENGTH - 1, -1, -1):
        out[i] = code % 3
        code //= 3
    return out


def feedback_real(guess: str, answer: str) -> int:
    """The real game's feedback code (letter counts respected)."""
    marks = [0, 0, 0, 0, 0]
    spare: dict[str, int] = {}
    for i in range(WORD_LENGTH):
        a = answer[i]
        if guess[i] == a:
            marks[i] = 2
        else:
            spare[a] = spare.get(a, 0) + 1
    for i in range(WORD_LENGTH):
        if not marks[i]:
            n = spare.get(guess[i], 0)
            if n:
                marks[i] = 1
                spare[guess[i]] = n - 1
    return (((marks[0] * 3 + marks[1]) * 3 + marks[2]) * 3 + marks[3]) * 3 + marks[4]


def feedback_lmrl(guess: str, answer: str) -> int:
    """LMRL-Gym's feedback code: per position g, else y if the letter is anywhere, else b."""
    code = 0
    for i in range(WORD_LENGTH):
        c = guess[i]
        code = code * 3 + (2 if c == answer[i] else 1 if c in answer else 0)
    return code


FEEDBACK = {"real": feedback_real, "lmrl": feedback_lmrl}


def is_word(text: str) -> bool:
    return len(text) == WORD_LENGTH and text.isascii() and text.isalpha() and text.islower()


def read_words(lines: Iterable[str]) -> list[str]:
    """Five-letter lower-case a-z words, in file order, without duplicates (others are skipped)."""
    seen: dict[str, None] = {}
    for line in lines:
        w = line.strip()
        if is_word(w):
            seen.setdefault(w, None)
    return list(seen)


def packaged_words(name: str) -> list[str]:
    """A word list shipped in ``envs/wordle/assets`` (``answers.txt``, ``small.txt`` or ``guesses.txt``)."""
    text = resources.files("envs.wordle").joinpath("assets", name).read_text(encoding="ascii")
    return read_words(text.splitlines())


def file_words(path: str | Path) -> list[str]:
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise ValueError(f"cannot read the word list {p} ({e.strerror or e})") from None
    words = read_words(text.splitlines())
    if not words:
        raise ValueError(f"{p} has no five-letter lower-case words")
    return words


@dataclass(eq=False)
class Vocab:
    """Answers (the hidden-word pool) and allowed guesses, with bitset tables over the answers."""

    answers: tuple[str, ...]
    guesses: tuple[str, ...]
    guess_index: dict[str, int] = field(init=False)
    answer_index: dict[str, int] = field(init=False)
    full: int = field(init=False)
    at: list[list[int]] = field(init=False)  # at[i][letter]: answers with that letter at i
    atleast: list[list[int]] = field(init=False)  # atleast[letter][k]: >= k copies (k 0..6)
    rendered: tuple[str, ...] = field(init=False)  # guesses in canonical action form

    def __post_init__(self) -> None:
        self.guess_index = {w: i for i, w in enumerate(self.guesses)}
        self.answer_index = {w: i for i, w in enumerate(self.answers)}
        self.rendered = tuple(" ".join(w) + "\n" for w in self.guesses)
        n = len(self.answers)
        self.full = (1 << n) - 1
        self.at = [[0] * 26 for _ in range(WORD_LENGTH)]
        self.atleast = [[self.full] + [0] * (WORD_LENGTH + 1) for _ in range(26)]
        for k, w in enumerate(self.answers):
            bit = 1 << k
            counts: dict[int, int] = {}
            for i, ch in enumerate(w):
                li = ord(ch) - 97
                self.at[i][li] |= bit
                counts[li] = counts.get(li, 0) + 1
            for li, m in counts.items():
                for j in range(1, m + 1):
                    self.atleast[li][j] |= bit

    @property
    def size(self) -> int:
        return len(self.answers)

    def consistent_with(self, guess: str, code: int, rule: str) -> int:
        """The answers that would give ``code`` for ``guess`` under ``rule``, as a bitset."""
        full, at, atleast = self.full, self.at, self.atleast
        marks = code_digits(code)
        mask = full
        if rule == "lmrl":
            for i, m in enumerate(marks):
                li = ord(guess[i]) - 97
                if m == 2:
                    mask &= at[i][li]
                elif m == 1:
                    mask &= atleast[li][1] ^ at[i][li]
                else:
                    mask &= full ^ atleast[li][1]
            return mask
        marked: dict[int, int] = {}
        black: set[int] = set()
        for i, m in enumerate(marks):
            li = ord(guess[i]) - 97
            if m == 2:
                mask &= at[i][li]
            else:
                mask &= full ^ at[i][li]
            if m:
                marked[li] = marked.get(li, 0) + 1
            else:
                black.add(li)
        for li in set(marked) | black:
            n = marked.get(li, 0)
            mask &= atleast[li][n]
            if li in black:
                mask &= full ^ atleast[li][n + 1]
        return mask

    def split_factors(self, guess: str, rule: str) -> list[tuple[int, ...]]:
        """Partitions of all answers whose common refinement groups answers by feedback to ``guess``."""
        return _factors(self, guess, rule)


@lru_cache(maxsize=8)
def load_vocab(answers: tuple[str, ...], guesses: tuple[str, ...]) -> Vocab:
    """Build (once per word lists) the tables for ``answers``; guesses always include the answers."""
    if not answers:
        raise ValueError("the answer list is empty")
    merged = tuple(dict.fromkeys((*answers, *guesses)))
    return Vocab(answers, merged)


def default_vocab() -> Vocab:
    return load_vocab(tuple(packaged_words("answers.txt")), tuple(packaged_words("guesses.txt")))


def small_vocab() -> Vocab:
    """The closed 400-word game: ``small.txt`` as answers and the only allowed guesses."""
    words = tuple(packaged_words("small.txt"))
    return load_vocab(words, words)


LMRL_LIST_SHA256 = "5e56216aa777247798e4c1fd67eafb7478a387065b9e934ced99aed3943017f8"
"""sha256 of LMRL-Gym's 431-word ``wordle_official_400.txt`` (sorted, lower case, one per line):
how a ``vocab_file`` is recognised as LMRL's game. The list itself is not shipped."""


def list_digest(words: tuple[str, ...] | list[str]) -> str:
    """The digest :data:`LMRL_LIST_SHA256` is compared with."""
    return hashlib.sha256("\n".join(sorted(set(words))).encode()).hexdigest()


def _factors(v: Vocab, guess: str, rule: str) -> list[tuple[int, ...]]:
    full, at, atleast = v.full, v.at, v.atleast
    out: list[tuple[int, ...]] = []
    if rule == "lmrl":
        for i, ch in enumerate(guess):
            li = ord(ch) - 97
            present = atleast[li][1]
            out.append((at[i][li], present ^ at[i][li], full ^ present))
        return out
    mult: dict[int, int] = {}
    for i, ch in enumerate(guess):
        li = ord(ch) - 97
        out.append((at[i][li], full ^ at[i][li]))
        mult[li] = mult.get(li, 0) + 1
    for li, m in mult.items():
        row = atleast[li]
        out.append(tuple(row[k] ^ row[k + 1] for k in range(m)) + (row[m],))
    return out


def partition_sizes(cells: int, factors: Sequence[tuple[int, ...]]) -> list[int]:
    """Sizes of the non-empty blocks of ``cells`` under the common refinement of ``factors``."""
    blocks = [cells]
    for parts in factors:
        nxt = []
        for b in blocks:
            for p in parts:
                x = b & p
                if x:
                    nxt.append(x)
        blocks = nxt
    return [b.bit_count() for b in blocks]


def expected_log_remaining(sizes: Sequence[int], total: int) -> float:
    """Mean of ``log(size of the remaining set)`` over the answers (LMRL's info-gain criterion)."""
    return math.fsum(k * _LOG[k] if k < len(_LOG) else k * math.log(k) for k in sizes) / total


_LOG = [0.0, 0.0] + [math.log(k) for k in range(2, 4096)]


def set_bits(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, ascending."""
    out = []
    base = 0
    for word in _words64(mask):
        while word:
            low = word & -word
            out.append(base + low.bit_length() - 1)
            word ^= low
        base += 64
    return out


def nth_set_bit(mask: int, n: int) -> int:
    """Index of the ``n``-th (0-based) set bit of ``mask``; ``n`` must be below its popcount."""
    base = 0
    for word in _words64(mask):
        c = word.bit_count()
        if n < c:
            for _ in range(n):
                word &= word - 1
            return base + (word & -word).bit_length() - 1
        n -= c
        base += 64
    raise IndexError("n is not below the number of set bits")


def _words64(mask: int) -> list[int]:
    """``mask`` as 64-bit words, least significant first."""
    data = mask.to_bytes((mask.bit_length() + 63) // 64 * 8, "little")
    return [int.from_bytes(data[j : j + 8], "little") for j in range(0, len(data), 8)]
