"""A task's episode as a chat conversation, from either side.

* ``system``: the side's rules: the task's own instructions for the role
  (``TaskSpec.instructions``), else the role's generic rules with the task's summary (what an
  ``hf:`` chat model or an ``http:`` endpoint is told: :func:`envs.players.remote.role_prompt`).
* ``user``: what the environment said to that side (the task's observations for the acting side;
  what the task asked the partner, for the partner side).
* ``assistant``: that side's own turns (its actions or replies), without their closing newline.

:func:`resolve_side` turns ``"agent"``, ``"partner"`` or a role name (``"oracle"``,
``"buyer"``) into the role; :class:`Conversation` grows a transcript turn by turn;
:func:`action_text` turns a chat reply into the task's action (its first line, closed by
``"\\n"``, as LMRL's policies and our endpoint agents write them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from envs.core import TaskSpec, Text
from envs.players.remote import history_to_messages, role_prompt

Message = dict[str, str]
SIDES = ("agent", "partner")


def resolve_side(spec: TaskSpec, side: str) -> str:
    """The role ``side`` names in the task: ``agent`` is ``roles[0]``, ``partner`` ``roles[1]``;
    a role name is itself. ValueError (one line) for a side the task does not have."""
    roles = tuple(spec.roles)
    if side == "agent" or side == roles[0]:
        return roles[0]
    if len(roles) > 1 and (side == "partner" or side in roles[1:]):
        return roles[1] if side == "partner" else side
    others = f" or {roles[1]} (the partner)" if len(roles) > 1 else " (it has one side)"
    raise ValueError(f"{spec.id}: side must be agent ({roles[0]}){others}, not {side!r}")


def is_partner(spec: TaskSpec, role: str) -> bool:
    return role != spec.roles[0]


def system_prompt(task: object, role: str) -> str:
    """What the side playing ``role`` is told before the dialogue (see the module docstring)."""
    return role_prompt(role, task)


def action_text(reply: str) -> str:
    """A chat reply as the task's action: its first non-empty line, ending in one ``"\\n"``."""
    return reply.lstrip("\n").split("\n", 1)[0] + "\n"


def _content(text: str) -> str:
    return text.rstrip("\n")


@dataclass
class Conversation:
    """One side's transcript: the system message, then user and assistant turns in order
    (consecutive texts of one speaker are joined by a newline, as the endpoint agents send them)."""

    system: str
    messages: list[Message] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.messages:
            self.messages.append({"role": "system", "content": self.system})

    def add(self, role: str, text: str) -> None:
        """Append ``text`` said by ``role`` (``user`` or ``assistant``); empty text adds nothing."""
        content = _content(text)
        if not content:
            return
        last = self.messages[-1]
        if last["role"] == role:
            last["content"] += "\n" + content
        else:
            self.messages.append({"role": role, "content": content})

    def heard(self, context: Sequence[Text]) -> None:
        """What the partner was just given (``context``: the history the task passed to its
        ``act``). A history that carries on the transcript so far (the car buyer's) adds its new
        part; a fresh one (the oracle's question with its secret, the board for the chess
        opponent) is added whole as a user turn."""
        seen = self.messages[1:]
        given = history_to_messages(context, None)
        if seen and given[: len(seen)] == seen:
            for m in given[len(seen) :]:
                self.add(m["role"], m["content"])
        else:
            for t in context:
                if not t.is_action:
                    self.add("user", t.text)

    def copy(self) -> list[Message]:
        return [dict(m) for m in self.messages]


def episode_messages(
    system: str, first_observation: str, turns: Sequence[tuple[str, str]]
) -> list[Message]:
    """The acting side's conversation of a whole episode: ``turns`` are (action, observation)."""
    conv = Conversation(system)
    conv.add("user", first_observation)
    for action, observation in turns:
        conv.add("assistant", action)
        conv.add("user", observation)
    return conv.messages


def partner_messages(system: str, turns: Sequence[tuple[str, str]]) -> list[Message]:
    """The partner's side of a recorded episode: the acting side's actions are what it heard,
    the observations that came back its replies. (Its private brief, a secret or a persona, is
    not in the recorded steps; the live seat, :mod:`envs.adapters.seat`, has it.)"""
    conv = Conversation(system)
    for action, observation in turns:
        conv.add("user", action)
        conv.add("assistant", observation)
    return conv.messages
