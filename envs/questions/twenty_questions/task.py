"""Twenty Questions (``twenty-questions``): guess the secret object with yes/no questions.

LMRL-Gym's task (``llm_rl_scripts/twenty_questions``) with our own knowledge base: 207 everyday
objects in 18 categories (``assets/objects.txt``), each with synonyms and at
least 20 facts. ``reset(seed)`` draws the object with ``random.Random(seed)``, or takes index
``seed % n`` with ``deterministic=True``, or the named one with ``secret="Car"``.

Texts (byte-for-byte LMRL): first observation ``"Questions:\\n"``; an action is a question line
such as ``"Is it an animal?\\n"`` (kept verbatim in the history); the observation is the
oracle's ``"Yes.\\n"`` or ``"No.\\n"``; the model sees the whole dialogue.

Rewards: −1 per question; the question that correctly guesses the object gets 0 and ends the
episode (``terminated``, ``info["success"] = True``). A correct guess is a question that names
the object (any of its names, last in the question, with no other object and no *or*/*not*;
``"Is it a car?"``, ``"Car?"``, ``"Is it a kind of car?"``) answered yes. After the 20th answer
the episode ends (``truncated``); returns lie in [−20, 0]. Any text is a question (−1).

The oracle (role ``"oracle"``) is the embedded knowledge-base oracle
(:mod:`envs.questions.twenty_questions.partner`) unless the option ``partner`` gives an agent (a person, a
model) or ``partner_replies`` recorded replies; see :mod:`envs.questions.task`. A partner's reply is
normalised as LMRL does: after stripping and lower-casing, one starting with ``yes`` is
``"Yes."``, anything else ``"No."`` (``info["normalised"]`` marks a changed reply, and
``info["reply"]`` keeps it as given): a person's ``"sometimes"``, ``"maybe"`` or ``"it depends"``
reaches the asker as ``"No."``.

Options: ``partner``, ``partner_replies``, ``max_questions`` (20), ``deterministic``, ``secret``.
Scripted guessers: ``strong`` (best-split asker), ``behaviour`` (LMRL-like data, success ≈ 0.31),
``random`` (random questions from the bank).
"""

from __future__ import annotations

from typing import Any

from envs.core import InvalidInput, TaskSpec
from envs.questions.task import OracleReply, QuestionTask
from envs.questions.text import (
    REPLY_LIMIT,
    clean_text,
    fold,
    reply_yes_no,
    short_yes_no,
    vague,
    yes_no,
)
from envs.questions.twenty_questions.partner import Thing, answer, objects, parse

TASK_ID = "twenty-questions"


def article(name: str) -> str:
    """``"a car"``, ``"an apple"``, ``"scissors"``: how the bank names an object."""
    low = name.lower()
    if low.endswith("s") and not low.endswith(("ss", "us")):
        return low
    return ("an " if low[0] in "aeiou" else "a ") + low


class TwentyQuestionsTask(QuestionTask):
    """LMRL's Twenty Questions with an embedded knowledge-base oracle (module docstring)."""

    def __init__(self, **options: Any) -> None:
        self.things: tuple[Thing, ...] = objects()
        self.n_secrets = len(self.things)
        super().__init__(**options)
        self.spec = TaskSpec(
            id=TASK_ID,
            version=1,
            title="Twenty Questions",
            summary="Guess the hidden object by asking yes/no questions.",
            max_turns=self.max_questions,
            reward_range=(-1.0, 0.0),
            roles=("guesser", "oracle"),
            partner="oracle",
            norm=None,
            success_return=None,
            help=HELP,
            options=dict(self.options),
            reply_kind="yes-no",
            instructions=INSTRUCTIONS,
        )

    # -- hooks ---------------------------------------------------------------------------------
    def find_secret(self, name: str) -> int:
        key = fold(name).strip()
        for i, t in enumerate(self.things):
            if key in (fold(v) for v in t.variants):
                return i
        raise ValueError(f"unknown object {name!r} for {TASK_ID}")

    def secret_name(self) -> str:
        return self.things[self.secret].name

    def guess_name(self, index: int) -> str:
        return self.things[index].name

    def secret_state(self) -> dict[str, Any]:
        t = self.things[self.secret]
        return {"name": t.name, "variants": list(t.variants), "category": t.category}

    def embedded_answer(self, question: str, secret: int | None = None) -> OracleReply:
        return answer(question, self.secret if secret is None else secret)

    def guess_target(self, question: str) -> int | None:
        return parse(question).target

    def unlisted_guess(self, question: str) -> str | None:
        return parse(question).unlisted

    def oracle_prompt(self, question: str) -> str:
        t = self.things[self.secret]
        return (
            "Answer the question about the object truthfully.\n"
            f"object: ({', '.join(t.variants)})\n"
            f"question: {question}\n"
            "answer (yes or no): "
        )

    def normalise_reply(self, raw: str) -> str:
        return "Yes." if yes_no(raw.strip()) is True else "No."

    def parse_reply(self, typed: str) -> str:
        """A person's answer as the oracle: ``y``/``n`` (and the like) become ``"Yes."``/``"No."``;
        a hedge (``"sometimes"``, ``"maybe"``, ``"it depends"``) or a longer yes/no (``"yes,
        usually"``) is kept as typed, so the step records it (``info["reply"]``) while the asker
        sees LMRL's reading of it (anything not starting with yes is ``"No."``)."""
        reply = short_yes_no(typed)
        if reply is not None:
            return reply
        text = clean_text(typed, REPLY_LIMIT)
        if text and (vague(text) or reply_yes_no(text) is not None):
            return text
        raise InvalidInput("Answer yes or no (y / n); sometimes / maybe / it depends count as no.")


HELP = """\
## Twenty Questions

The oracle has an everyday object in mind. Ask **yes/no questions** (one per turn) and name the
object when you think you know it: *Is it an animal?*, *Is it bigger than a breadbox?*,
*Can you eat it?*, then *Is it a dog?*.

* Every question costs **-1**; the question that names the object is free and wins.
* The object is one of the list shown beside the dialogue (type in its search line to filter it).
  Naming something that is not on the list is a wrong guess.
* You have **20** questions. The object is shown at the end.
* When you play the **oracle**, answer the scripted guesser's questions with **yes** or **no**
  about the object shown to you (*sometimes*, *maybe* or *it depends* reach the guesser as
  **no**, as in LMRL-Gym).
"""


# -------------------------------------------------------------------------------------------
# The question bank and the scripted guessers


INSTRUCTIONS = {
    "guesser": (
        "We are playing Twenty Questions. I am thinking of an everyday object. Find it by asking "
        "yes/no questions, one question per reply, in one line: 'Is it an animal?', 'Can you eat "
        "it?'. You have 20 questions. When you think you know it, name it: 'Is it a dog?'"
    ),
    "oracle": (
        "We are playing Twenty Questions. Each message gives the object you are thinking of and "
        "a question about it. Answer with Yes or No, in one line."
    ),
}
"""What a chat model that was not trained on the task is told, by role (``TaskSpec.instructions``)."""
