"""Shared machinery of the question tasks (``twenty-questions``, ``guess-city``).

Both tasks are LMRL-Gym's guesser/oracle dialogue: the acting agent (role ``"guesser"``) asks one
question per step; the other side (role ``"oracle"``) answers. The first observation is
``"Questions:\\n"``; each action is a question line (kept verbatim in the history); each
observation is the oracle's answer followed by ``"\\n"``; the whole dialogue is the model's context
(no window). Reward −1 per question, 0 for the question that correctly guesses the secret (which
ends the episode, ``terminated``); after ``max_questions`` (20) answers the episode ends
(``truncated``), so a return lies in [−20, 0].

Who answers (checked in this order at each step):

1. ``partner_replies`` (option): recorded replies, replayed in order (for replaying an episode
   whose oracle was a person); when they run out, the embedded oracle takes over.
2. ``partner`` (option): any :class:`envs.core.Agent`. Its ``act(history)`` is called inside
   :meth:`QuestionTask.step` with ``history = (Text(prompt, is_action=False),)``, where ``prompt``
   is LMRL-Gym's oracle prompt for the current question (it names the secret). It must return the
   reply text; the task normalises it (:meth:`QuestionTask.normalise_reply`) and notes in the step
   info when it had to. ``act`` may block (a person answering in the app).
3. The embedded oracle (default): a knowledge-base answerer, no model, no network. Its step info
   carries ``"understood": False`` when it could not map the question to its knowledge.

Correct guess (any oracle): the question names the secret (:meth:`QuestionTask.guess_target`) and
the reply is a yes. A guess of something that is no secret of the task (``"Is it a giraffe?"``,
:meth:`QuestionTask.unlisted_guess`) is a wrong guess: its step info carries ``"guess"`` (the name
as asked) and ``"unlisted": True``, and the embedded oracle answers ``"No."`` (understood). The
names a guess can win with are :meth:`QuestionTask.guessable` (``state()["guessable"]``). Any text is a question: empty, huge, non-ASCII or control-character text costs
−1 like any other question and gets a defined answer (the embedded oracle says it did not
understand), never an exception.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from envs.core import Agent, InvalidInput, Step, TaskBase, TaskSpec, Text, TextHistory
from envs.questions.text import REPLY_LIMIT, clean_text, yes_no

INITIAL_TEXT = "Questions:\n"
ROLES = ("guesser", "oracle")


@dataclass
class OracleReply:
    """The embedded oracle's answer (without the trailing newline) and whether it understood."""

    text: str
    understood: bool
    detail: str = ""


@dataclass
class Turn:
    question: str
    answer: str
    understood: bool | None
    guess: str | None
    correct: bool
    normalised: bool
    unlisted: bool = False
    reply: str | None = None
    """The partner's reply as given, when the task changed it (``"sometimes"`` -> ``"No."``)."""


class QuestionTask(TaskBase):
    """Base class of the question tasks; subclasses supply the knowledge and the oracle."""

    spec: TaskSpec
    n_secrets: int = 0

    def __init__(
        self,
        *,
        partner: Agent | None = None,
        partner_replies: Sequence[str] | None = None,
        max_questions: int = 20,
        deterministic: bool = False,
        secret: str | None = None,
    ) -> None:
        self.max_questions = max(1, int(max_questions))
        self._defaults: dict[str, Any] = {
            "partner": partner,
            "partner_replies": partner_replies,
            "deterministic": bool(deterministic),
            "secret": secret,
        }
        self.options: dict[str, Any] = {"max_questions": self.max_questions}
        if deterministic:
            self.options["deterministic"] = True
        if secret is not None:
            self.options["secret"] = secret
            self.find_secret(secret)  # fail early on an unknown name
        self.secret = 0
        self._partner: Agent | None = None
        self._replies: list[str] | None = None
        self._turns: list[Turn] = []
        self._hist: list[Text] = [Text(INITIAL_TEXT, False)]
        self._pending: str | None = None
        self._done = True
        self._success = False
        self._return = 0.0

    # -- subclass hooks ------------------------------------------------------------------------
    def find_secret(self, name: str) -> int:
        raise NotImplementedError

    def secret_state(self) -> dict[str, Any]:
        raise NotImplementedError

    def secret_name(self) -> str:
        raise NotImplementedError

    def embedded_answer(self, question: str, secret: int | None = None) -> OracleReply:
        """The embedded oracle's answer for the secret (or for secret index ``secret``)."""
        raise NotImplementedError

    def guess_target(self, question: str) -> int | None:
        """The secret index the question names as a guess, if any (independent of the secret)."""
        raise NotImplementedError

    def unlisted_guess(self, question: str) -> str | None:
        """What the question names as a guess when that is no secret of the task (``"Is it a
        giraffe?"`` -> ``"giraffe"``): a wrong guess, whoever answers. None otherwise."""
        return None

    def guessable(self) -> list[str]:
        """The names a guess can win with, one per secret, in index order (what a person
        guessing may pick from; ``state()["guessable"]``)."""
        return [self.guess_name(i) for i in range(self.n_secrets)]

    def oracle_prompt(self, question: str) -> str:
        raise NotImplementedError

    def normalise_reply(self, raw: str) -> str:
        raise NotImplementedError

    def parse_reply(self, typed: str) -> str:
        """A person's reply as the oracle, checked (raises InvalidInput) and tidied."""
        raise NotImplementedError

    # -- Task API --------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> str:
        opts = {**self._defaults, **dict(options or {})}
        if opts.get("secret") is not None:
            self.secret = self.find_secret(str(opts["secret"]))
        elif opts.get("deterministic") and seed is not None:
            self.secret = seed % self.n_secrets
        else:
            self.secret = random.Random(seed).randrange(self.n_secrets)
        replies = opts.get("partner_replies")
        self._replies = [str(r) for r in replies] if replies is not None else None
        self._partner = opts.get("partner")
        if self._partner is not None and self._replies is None:
            self._partner.reset(self, seed)
        self._turns = []
        self._hist = [Text(INITIAL_TEXT, False)]
        self._pending = None
        self._done = False
        self._success = False
        self._return = 0.0
        return INITIAL_TEXT

    def step(self, action: str) -> Step:
        if self._done:
            raise RuntimeError("the episode is over; call reset()")
        question = clean_text(action)
        self._pending = question
        try:
            info: dict[str, Any] = {}
            answer, normalised = self._answer(question, info)
        finally:
            self._pending = None
        target = self.guess_target(question)
        correct = target == self.secret and yes_no(answer) is True
        n = len(self._turns) + 1
        left = self.max_questions - n
        if target is not None:
            info["guess"] = self.guess_name(target)
        elif (named := self.unlisted_guess(question)) is not None:
            info["guess"] = named
            info["unlisted"] = True  # not on the list: a wrong guess, not a misunderstanding
        if normalised:
            info["normalised"] = True
        info["questions_left"] = left
        terminated = correct
        truncated = not correct and left <= 0
        if terminated or truncated:
            info["success"] = correct
            info["secret"] = self.secret_name()
        self._turns.append(
            Turn(
                question,
                answer,
                info.get("understood"),
                info.get("guess"),
                correct,
                normalised,
                bool(info.get("unlisted")),
                info.get("reply") if normalised else None,
            )
        )
        obs = answer + "\n"
        self._hist.append(Text(action, True))
        self._hist.append(Text(obs, False))
        reward = 0.0 if correct else -1.0
        self._return += reward
        self._done = terminated or truncated
        self._success = correct
        return Step(obs, reward, terminated, truncated, info)

    def _answer(self, question: str, info: dict[str, Any]) -> tuple[str, bool]:
        if self._replies is not None:
            idx = len(self._turns)
            if idx < len(self._replies):
                raw = self._replies[idx]
                info["answer_source"] = "replay"
                return self._external(raw, info)
            info["replies_exhausted"] = True
        if self._partner is not None and self._replies is None:
            raw = self._partner.act((Text(self.oracle_prompt(question), False),))
            info["answer_source"] = "partner"
            return self._external(raw if isinstance(raw, str) else str(raw), info)
        reply = self.embedded_answer(question)
        info["answer_source"] = "oracle"
        info["understood"] = reply.understood
        if reply.detail:
            info["oracle"] = reply.detail
        return reply.text, False

    def _external(self, raw: str, info: dict[str, Any]) -> tuple[str, bool]:
        info["reply"] = raw[:REPLY_LIMIT]
        text = self.normalise_reply(raw)
        return text, text != raw.strip()

    def history(self) -> TextHistory:
        return tuple(self._hist)

    def legal_actions(self) -> None:
        return None

    def parse_input(self, typed: str) -> str:
        """A person's question: one clean line, capitalised, ending in ``?`` (added if missing)
        and ``\\n`` (as LMRL's asker post-processing)."""
        q = clean_text(typed)
        if not q:
            raise InvalidInput("Type a question, for example: Is it bigger than a breadbox?")
        if len(typed) > 300:
            raise InvalidInput("That question is too long; keep it under 300 characters.")
        if q[-1].isalnum():
            q += "?"
        return q[0].upper() + q[1:] + "\n"

    def state(self) -> dict[str, Any]:
        asked = len(self._turns)
        turn = None if self._done else ("oracle" if self._pending is not None else "guesser")
        return {
            "roles": list(ROLES),
            "turn": turn,
            "transcript": [t.__dict__.copy() for t in self._turns],
            "pending_question": self._pending,
            "questions_asked": asked,
            "questions_left": self.max_questions - asked,
            "max_questions": self.max_questions,
            "done": self._done,
            "success": self._success,
            "return": self._return,
            "secret": self.secret_state(),
            "answer": self.secret_name() if self._done else None,
            "partner": self.partner_label(),
            "guessable": self.guessable(),
        }

    def partner_label(self) -> str:
        if self._replies is not None:
            return "replay"
        if self._partner is not None:
            return (
                f"{getattr(self._partner, 'kind', 'agent')}:{getattr(self._partner, 'name', '?')}"
            )
        return "embedded"

    def guess_name(self, index: int) -> str:
        raise NotImplementedError

    @property
    def done(self) -> bool:
        return self._done

    def transcript(self) -> list[Turn]:
        return list(self._turns)


def history_pairs(history: Iterable[Text]) -> list[tuple[str, str]]:
    """(question, answer) pairs of a question-task history (actions followed by observations)."""
    out: list[tuple[str, str]] = []
    pending: str | None = None
    for t in history:
        if t.is_action:
            pending = t.text
        elif pending is not None:
            out.append((pending, t.text))
            pending = None
    return out
