"""Wordle with LMRL-Gym's texts: ``wordle`` (the real game's feedback) and ``wordle-lmrl``.

A hidden five-letter answer is drawn uniformly from the answer list by ``reset(seed)`` (or given
as ``options={"answer": "crane"}``). The agent has 6 guesses.

Texts (LMRL-Gym's ``ReformatWordleEnvironment``):

* The first observation is ``"Wordle:\\n"``.
* An action is a word; before scoring, surrounding whitespace is stripped and every space removed,
  so ``"c r a n e\\n"`` (the canonical form), ``"crane"`` and ``" c r a n e "`` are the same guess;
  nothing is lower-cased (``"CRANE"`` is invalid). ``history()`` re-renders every action as its
  characters separated by spaces plus ``"\\n"`` (``""`` -> ``"\\n"``), as LMRL does.
* The observation after a valid guess is the feedback, e.g. ``"b y g b b\\n"`` (``g`` right place,
  ``y`` elsewhere in the word, ``b`` absent); after an invalid guess it is ``"\\n"``.

Feedback: ``wordle`` follows the real game (a letter is yellow only as many times as it is still
unmatched in the answer: guess ``salsa`` vs answer ``salty`` is ``g g g b b``); ``wordle-lmrl``
follows LMRL's rule (per position: ``g``, else ``y`` if the letter occurs anywhere, else ``b``:
``g g g y y``).

Rewards: -1 per valid guess, 0 for the guess that solves it (terminated, ``info["success"]``).
An invalid guess (not five letters a-z, or not in the guess list) gets ``bad_word_reward``
(-1.0 by default; LMRL's RL training scripts use -10) and still counts as a guess. After the
sixth guess the episode ends (terminated, ``success`` False). Solving at guess k returns -(k-1);
any failure returns -6 with the default penalty.

Word lists: by default (``words="standard"``) the packaged ``answers.txt`` (2,300 common words)
and ``guesses.txt`` (~10,000 allowed guesses, including the answers); see
``envs/wordle/assets/ATTRIBUTION``. ``words="small"`` is a closed game on the packaged
``small.txt``: the 400 most common answers, used as answers and as the only allowed guesses, the
size of LMRL-Gym's benchmark list (the setting its RL results are for; small models can learn it
on a CPU). ``vocab_file`` replaces both with one list (e.g. LMRL-Gym's 431-word
``wordle_official_400.txt``, which it uses as answers and guesses); ``guess_file`` adds allowed
guesses.

Options: ``words`` (standard | small), ``vocab_file``, ``guess_file``, ``bad_word_reward`` (-1.0),
``max_guesses`` (6).
LMRL's normalisation constants (dataset average -4.121715, max -1.935, min -6) are attached
only to ``wordle-lmrl`` on LMRL's game (``vocab_file`` = LMRL-Gym's ``wordle_official_400.txt``,
recognised by its digest; the list is not shipped) with the default penalty and guesses: the
constants are that game's.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from envs.core import InvalidInput, NormConstants, Step, TaskBase, TaskSpec, Text, TextHistory
from envs.wordle.engine import (
    FEEDBACK,
    FEEDBACK_TEXT,
    LMRL_LIST_SHA256,
    SOLVED,
    Vocab,
    code_digits,
    default_vocab,
    file_words,
    list_digest,
    load_vocab,
    nth_set_bit,
    small_vocab,
)

WORD_LISTS = ("standard", "small")
FIRST_OBSERVATION = "Wordle:\n"
INVALID_OBSERVATION = "\n"
LMRL_NORM = NormConstants(-6.0, -4.121715, -1.935, source="LMRL-Gym (431-word list)")

_VOCABS = {"standard": default_vocab, "small": small_vocab}

_OK: Mapping[str, Any] = {}
_SOLVED_INFO: Mapping[str, Any] = {"success": True}
_FAILED_INFO: Mapping[str, Any] = {"success": False}
_INVALID_INFO: Mapping[str, Any] = {"invalid": True}
_INVALID_END_INFO: Mapping[str, Any] = {"invalid": True, "success": False}


def render_action(text: str) -> str:
    """LMRL's rendering of an action in the history: the guess's characters spaced, plus ``\\n``."""
    return " ".join(text.strip().replace(" ", "")) + "\n"


class WordleTask(TaskBase):
    """One Wordle game; see the module docstring for the rules and texts."""

    def __init__(
        self,
        rule: str = "real",
        vocab_file: str | None = None,
        guess_file: str | None = None,
        bad_word_reward: float = -1.0,
        max_guesses: int = 6,
        words: str = "standard",
    ) -> None:
        if rule not in FEEDBACK:
            raise ValueError(f"unknown Wordle rule {rule!r}; choose real or lmrl")
        if words not in WORD_LISTS:
            raise ValueError(f"unknown word list {words!r}; choose {' or '.join(WORD_LISTS)}")
        if words != "standard" and vocab_file:
            raise ValueError(f"give either words={words} or vocab_file, not both")
        self.rule = rule
        self._feedback = FEEDBACK[rule]
        if vocab_file is None and guess_file is None:
            self.vocab: Vocab = _VOCABS[words]()
        else:
            base = _VOCABS[words]()
            answers = tuple(file_words(vocab_file)) if vocab_file else base.answers
            guesses = answers if vocab_file or words != "standard" else base.guesses
            if guess_file:
                guesses = (*guesses, *file_words(guess_file))
            self.vocab = load_vocab(answers, guesses)
        self.bad_word_reward = float(bad_word_reward)
        self.max_guesses = max(1, int(max_guesses))
        options: dict[str, Any] = {
            "bad_word_reward": self.bad_word_reward,
            "max_guesses": self.max_guesses,
        }
        if words != "standard":
            options["words"] = words
        if vocab_file:
            options["vocab_file"] = str(vocab_file)
        if guess_file:
            options["guess_file"] = str(guess_file)
        lmrl_setup = (
            rule == "lmrl"
            and vocab_file is not None
            and list_digest(self.vocab.answers) == LMRL_LIST_SHA256
            and not guess_file
            and self.bad_word_reward == -1.0
            and self.max_guesses == 6
        )
        task_id = "wordle" if rule == "real" else "wordle-lmrl"
        self.spec = TaskSpec(
            id=task_id,
            version=1,
            title="Wordle" if rule == "real" else "Wordle (LMRL feedback)",
            summary=(
                "Find the hidden five-letter word in six guesses from coloured feedback."
                if rule == "real"
                else "Wordle with LMRL-Gym's feedback rule (repeated letters all marked)."
            ),
            max_turns=self.max_guesses,
            reward_range=(min(self.bad_word_reward, -1.0), 0.0),
            norm=LMRL_NORM if lmrl_setup else None,
            success_return=None,
            help=WORDLE_HELP,
            options=options,
            max_action_bytes=max(len(w.encode()) for w in self.vocab.rendered),
        )
        self._answer = self.vocab.answers[0]
        self._consistent = self.vocab.full
        self._words: list[str] = []
        self._codes: list[int] = []  # -1 for an invalid guess
        self._turn = 0
        self._done = True
        self._return = 0.0

    # -- Task API --------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> str:
        answer = (options or {}).get("answer")
        if answer is not None:
            if answer not in self.vocab.answer_index:
                raise ValueError(f"answer {answer!r} is not in the answer list")
            self._answer = answer
        else:
            self._answer = self.vocab.answers[random.Random(seed).randrange(self.vocab.size)]
        self._consistent = self.vocab.full
        self._words = []
        self._codes = []
        self._turn = 0
        self._done = False
        self._return = 0.0
        return FIRST_OBSERVATION

    def step(self, action: str) -> Step:
        if self._done:
            raise RuntimeError("the game is over; call reset()")
        word = action.strip().replace(" ", "")
        self._turn += 1
        self._words.append(word)
        last = self._turn >= self.max_guesses
        if word not in self.vocab.guess_index:
            self._codes.append(-1)
            self._return += self.bad_word_reward
            self._done = last
            info = _INVALID_END_INFO if last else _INVALID_INFO
            return Step(INVALID_OBSERVATION, self.bad_word_reward, last, False, info)
        code = self._feedback(word, self._answer)
        self._codes.append(code)
        self._consistent &= self.vocab.consistent_with(word, code, self.rule)
        if code == SOLVED:
            self._done = True
            return Step(FEEDBACK_TEXT[code], 0.0, True, False, _SOLVED_INFO)
        self._return -= 1.0
        self._done = last
        return Step(FEEDBACK_TEXT[code], -1.0, last, False, _FAILED_INFO if last else _OK)

    def history(self) -> TextHistory:
        out = [Text(FIRST_OBSERVATION, False)]
        for word, code in zip(self._words, self._codes, strict=True):
            out.append(Text(" ".join(word) + "\n", True))
            out.append(Text(FEEDBACK_TEXT[code] if code >= 0 else INVALID_OBSERVATION, False))
        return tuple(out)

    def legal_actions(self) -> list[str]:
        """Every allowed guess in canonical form (``"c r a n e\\n"``)."""
        return list(self.vocab.rendered)

    def parse_input(self, typed: str) -> str:
        word = "".join(typed.split()).lower()
        if not word:
            raise InvalidInput("Type a five-letter word and press Enter.")
        if len(word) != 5:
            raise InvalidInput(f"Guesses have five letters; {word[:12]!r} has {len(word)}.")
        if not (word.isascii() and word.isalpha()):
            raise InvalidInput("Use the letters a to z only.")
        if word not in self.vocab.guess_index:
            raise InvalidInput(f"{word.upper()} is not in the word list.")
        return " ".join(word) + "\n"

    def state(self) -> dict[str, Any]:
        rows = []
        letters: dict[str, str] = {}
        rank = {"b": 0, "y": 1, "g": 2}
        for word, code in zip(self._words, self._codes, strict=True):
            if code < 0:
                rows.append({"word": word[:40], "valid": False, "marks": None})
                continue
            marks = ["byg"[d] for d in code_digits(code)]
            rows.append({"word": word, "valid": True, "marks": marks})
            for ch, m in zip(word, marks, strict=True):
                if ch not in letters or rank[m] > rank[letters[ch]]:
                    letters[ch] = m
        success = bool(self._codes) and self._codes[-1] == SOLVED
        return {
            "rule": self.rule,
            "rows": rows,
            "letters": letters,
            "turn": self._turn,
            "max_guesses": self.max_guesses,
            "done": self._done,
            "success": success if self._done else None,
            "answer": self._answer if self._done else None,
            "consistent": self._consistent.bit_count(),
            "return": self._return,
            "answers": self.vocab.size,
        }

    # -- for policies and hints ------------------------------------------------------------
    @property
    def consistent(self) -> int:
        """Bitset over ``vocab.answers`` of the answers still consistent with the feedback."""
        return self._consistent

    @property
    def answer(self) -> str:
        return self._answer

    def consistent_words(self, limit: int | None = None) -> list[str]:
        """The answers still possible (the first ``limit`` of them, in list order)."""
        n = self._consistent.bit_count()
        k = n if limit is None else min(n, limit)
        return [self.vocab.answers[nth_set_bit(self._consistent, i)] for i in range(k)]


WORDLE_HELP = """\
## Wordle

Find the hidden five-letter word in **six guesses**. After each guess the tiles turn
**green** (right letter, right place), **yellow** (in the word, elsewhere) or **grey** (not in
the word). Each guess costs **-1**; the guess that finds the word costs nothing.

* Type a word and press **Enter**; **Backspace** deletes a letter.
* A word that is not in the list is explained and does not cost a guess (unless LMRL-strict mode
  is on, where it counts as an invalid guess, as it does for a model).
* The hint shows how many words are still possible.
* In *wordle-lmrl*, a repeated letter is marked yellow everywhere it occurs in your guess if the
  word contains it at all (LMRL-Gym's rule), not only as often as it occurs.
* The task option **words=small** (in the new-episode dialog, or `--option words=small`) plays a
  closed game on 400 common words, the size of LMRL-Gym's list: only those words are accepted.
"""
