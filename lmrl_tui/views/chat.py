"""A chat view for the dialogue tasks: the transcript, a line to type into, and the turn.

Used by the question tasks (Twenty Questions, Guess My City) and general enough for any
two-sided chat whose ``state()`` has a ``transcript``:

* question tasks: ``[{"question", "answer", "understood", "correct", ...}]`` with
  ``questions_asked``/``questions_left``/``max_questions``, ``secret`` a dict and ``turn``;
* role/text chats (Car Dealer): ``[{"role", "text" (or "visible")}]`` with ``to_act``, ``turn``/
  ``max_turns`` and ``secret`` a list of the state keys that are hidden from the agent.

The secret is shown to a person who plays the partner (the oracle, the buyer) and to everyone when
the episode is over. A person answering as a yes/no oracle types into the reply line, which has the
focus when a reply is due (``y``, ``yes``, or a reply such as ``sometimes``: the task says what it
accepts and how the asker reads it; a typed reply is sent and recorded as typed), or presses the
Yes/No buttons (recorded as a button; the y/n keys answer once the focus is on a button, recorded
as a key).

A person guessing in a question task sees what can be guessed (the task's ``state()["guessable"]``)
beside the dialogue, with a search line that filters it; a guess of something outside the list is
marked as such in the transcript (a wrong guess, not a misunderstanding).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from rich.markup import escape
from rich.text import Text as RichText
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.geometry import Size
from textual.widgets import Button, Input, Static

from envs.core import Text
from lmrl_tui.views.base import TaskView
from lmrl_tui.views.redraw import TypingInput, update_static
from lmrl_tui.views.transcript import chat_lines, filter_names, progress_line, secret_lines, to_act

ROLE_STYLES = ("bold cyan", "bold magenta")
_QUESTION = re.compile(r"question: (.*)\n", re.DOTALL)


class ChatLog(VerticalScroll):
    """The transcript's scroll box: when its content grows (a reply, or a reply that wraps onto
    more lines than first measured), it scrolls to its new end once laid out. The scroll to the
    end after the next refresh alone could land short on a loaded machine, and stayed there."""

    def watch_virtual_size(self, old: Size, new: Size) -> None:
        if new.height > old.height:
            self.scroll_end(animate=False)


class ChatView(TaskView):
    """The chat play view (see the module docstring)."""

    BINDINGS = [
        Binding("y", "reply_yes", "Yes", id="chat.yes"),
        Binding("n", "reply_no", "No", id="chat.no"),
    ]

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.roles: tuple[str, ...] = tuple(self.spec.roles)
        self.state: dict[str, Any] = {}
        self.replying: str | None = None
        """The partner role a person must answer as now (None: not answering)."""
        self.pending: str | None = None
        self._acting: str | None = None
        self._human_turn = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("", id="chat-info")
            yield Static("", id="chat-secret")
            with Horizontal(id="chat-body"):
                with ChatLog(id="chat-log"):
                    yield Static("", id="chat-text")
                with Vertical(id="chat-list"):
                    yield Static("", id="chat-list-title")
                    yield TypingInput(placeholder="Search the list", id="chat-filter")
                    with VerticalScroll(id="chat-list-scroll"):
                        yield Static("", id="chat-list-names", markup=False)
            yield Static("", id="chat-turn")
            with Horizontal(id="chat-row"):
                yield TypingInput(placeholder="", id="chat-input", disabled=True)
                yield Button("Yes", id="chat-yes", variant="success")
                yield Button("No", id="chat-no", variant="error")

    # -- drawing ------------------------------------------------------------------------------
    def show_state(self, state: dict[str, Any]) -> None:
        self.state = state
        if self.replying is None:
            self.pending = None
        self._redraw()

    @property
    def yes_no(self) -> bool:
        """The partner answers only yes or no (buttons instead of a free reply): a spec fact."""
        return self.spec.reply_kind == "yes-no"

    def _label(self, role: str) -> str:
        you = " (you)" if role in self.human_roles else ""
        return f"{role.capitalize()}{you}"

    def _show_secret(self) -> bool:
        partner_only = len(self.roles) > 1 and self.roles[0] not in self.human_roles
        return bool(self.state.get("done")) or (
            len(self.roles) > 1
            and self.roles[1] in self.human_roles
            and (partner_only or self.replying is not None)
        )

    def render_transcript(self) -> RichText:
        out = RichText()
        lines = chat_lines(self.state, self.roles)
        if (
            self.pending is not None
            and lines
            and lines[-1][0] == self.roles[0]
            and (lines[-1][1].strip() == self.pending.strip())
        ):
            lines = lines[:-1]  # the task has the line already (mid-step): shown once, as awaited
        for i, (role, text, note) in enumerate(lines):
            if i:
                out.append("\n")
            style = ROLE_STYLES[0] if role == self.roles[0] else ROLE_STYLES[1]
            out.append(f"{self._label(role)}: ", style=style)
            out.append(text)
            if note:
                out.append(f"  ({note})", style="green" if note == "correct!" else "dim italic")
        if self.pending is not None:
            if out:
                out.append("\n")
            out.append(f"{self._label(self.roles[0])}: ", style=ROLE_STYLES[0])
            out.append(self.pending)
            out.append("  (waiting for your answer)", style="dim italic")
        if self.state.get("done"):
            out.append("\n\n")
            out.append(
                self._ending(), style="bold green" if self.state.get("success") else "bold red"
            )
        return out

    def result_text(self) -> str | None:
        return self._ending() if self.state.get("done") else None

    def _ending(self) -> str:
        secret = self.state.get("secret")
        name = secret.get("name") if isinstance(secret, dict) else None
        if self.state.get("success"):
            return f"Guessed it: {name}!" if name else "Done."
        return f"No more questions. It was {name}." if name else "The conversation is over."

    def _redraw(self) -> None:
        # update_static: a layout of the whole screen only when a box's size changes (five redraws
        # an answer each laid out the play screen: ~20 ms apiece on 2 cores, bench_person_keys)
        update_static(self.query_one("#chat-info", Static), progress_line(self.state))
        box = self.query_one("#chat-secret", Static)
        lines = secret_lines(self.state) if self._show_secret() else []
        box.display = bool(lines)
        update_static(
            box, "[b]The secret[/b] (hidden from the guesser)\n" + escape("\n".join(lines))
        )
        update_static(self.query_one("#chat-text", Static), self.render_transcript())
        # After the refresh that lays the new text out: a scroll_end straight away could land short
        # of the end when a long reply wrapped onto more lines than measured then.
        log = self.query_one("#chat-log", VerticalScroll)
        self.call_after_refresh(log.scroll_end, animate=False)
        self._draw_list()
        self._update_controls()

    @property
    def guessable(self) -> list[str]:
        """What a guess can name (the task's ``state()["guessable"]``), or [] without a list."""
        names = self.state.get("guessable")
        return [str(n) for n in names] if isinstance(names, list) else []

    def _draw_list(self) -> None:
        """Show the guessable names, filtered by the search line, to a person who guesses."""
        panels = self.query("#chat-list")
        if not panels:
            return
        names = self.guessable
        show = bool(names) and self.roles[0] in self.human_roles
        panels.first().display = show
        if not show:
            return
        shown = filter_names(names, self.query_one("#chat-filter", Input).value)
        self.query_one("#chat-list-title", Static).update(
            f"You can guess: {len(shown)} of {len(names)}"
        )
        self.query_one("#chat-list-names", Static).update("\n".join(shown) or "(no match)")

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "chat-filter":
            event.stop()
            self._draw_list()

    def _update_controls(self) -> None:
        self.refresh_bindings()
        inp = self.query_one("#chat-input", Input)
        # The answer buttons keep their place while a person plays the oracle and are dimmed
        # while the asker thinks (a press then does nothing): showing and hiding them at every
        # question, or disabling them (a disabled button has another border), changed the
        # layout, and each change redrew the whole screen (about half the CPU of an answer here).
        for b in self.query("#chat-row Button"):
            b.display = self._person_answers
            b.set_class(self.replying is None, "-idle")
        if self.replying is not None:
            inp.disabled = False
            inp.placeholder = (
                "Type yes, no or a reply such as sometimes; Enter sends"
                if self.yes_no
                else "Answer (yes, no or a sentence), Enter to send"
            )
            text = f"Answer as the {self.replying}: the secret is shown above"
            if self.yes_no:
                text += " · or press the Yes / No buttons"
        elif self._human_turn and not self.state.get("done"):
            inp.disabled = False
            inp.placeholder = "Type your question and press Enter"
            text = f"Your turn ({self._acting or self.roles[0]}): ask a question or name your guess"
        elif self._person_answers and not self.state.get("done"):
            # The person's reply line stays open between questions: what they type ahead goes
            # into it (never to a key binding) and waits there for the next question.
            inp.disabled = False
            inp.placeholder = "Your reply goes here once the question comes"
            acting = self._acting or to_act(self.state) or self.roles[0]
            text = self.agent_turn_text(acting, f"{acting.capitalize()} is thinking…")
        else:
            inp.disabled = True
            inp.placeholder = ""
            acting = self._acting or to_act(self.state)
            text = (
                ""
                if self.state.get("done") or acting is None
                else self.agent_turn_text(acting, f"{acting.capitalize()} is thinking…")
            )
        update_static(self.query_one("#chat-turn", Static), text)

    # -- turns --------------------------------------------------------------------------------
    def set_turn(self, role: str | None, human: bool) -> None:
        if role == self.roles[0] and self.replying is not None and not human:
            # The screen hands the turn back after our reply: the step is finishing.
            self.replying = None
        self._acting = role
        self._human_turn = human and role == self.roles[0]
        self._redraw()
        if self._human_turn or (self._person_answers and not self.state.get("done")):
            self.query_one("#chat-input", Input).focus()

    def request_reply(self, role: str, history: Sequence[Text]) -> None:
        self.replying = role
        m = _QUESTION.search(history[-1].text) if history else None
        self.pending = m.group(1).split("\n")[0] if m else None
        self._redraw()
        # The reply line has the focus, so what the person types is their reply (typed keys never
        # reach a binding); the buttons (and y/n once the focus is on them) answer as pressed.
        self.query_one("#chat-input", Input).focus()

    # -- input --------------------------------------------------------------------------------
    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "chat-filter":
            return
        typed = event.value
        if self.replying is not None:
            self._send_reply(typed)
            event.input.value = ""
            return
        if not self._human_turn:
            if self._person_answers and typed.strip():  # typed ahead: kept for the question
                self.show_error(
                    f"No question yet: wait for the {self.roles[0]}; your reply is kept."
                )
            return
        event.input.value = ""
        self.post_message(self.Submitted(typed, role=self.roles[0]))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "chat-yes":
            self._send_reply("Yes.", via="button", pressed="Yes")
        elif event.button.id == "chat-no":
            self._send_reply("No.", via="button", pressed="No")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("reply_yes", "reply_no"):
            if not (self.yes_no and self._person_answers):
                return False
            return True if self.replying is not None else None  # dimmed while the asker thinks
        return True

    @property
    def _person_answers(self) -> bool:
        """Whether a person plays the answering side (the oracle)."""
        return len(self.roles) > 1 and self.roles[1] in self.human_roles

    def action_reply_yes(self) -> None:
        self._send_reply("Yes.", via="key", pressed="y")

    def action_reply_no(self) -> None:
        self._send_reply("No.", via="key", pressed="n")

    def _send_reply(self, typed: str, via: str = "typed", pressed: str | None = None) -> None:
        """Send the person's reply; ``via`` says how it was given (typed, a button, a key)."""
        role = self.replying
        if role is None:
            return
        text = " ".join(typed.split())
        low = text.lower().rstrip(".! ")
        if low in ("y", "yes", "yeah", "yep", "n", "no", "nope", "nah"):
            text = typed  # sent as typed: the task reads it as "Yes."/"No." and the record keeps it
        elif not text:
            self.show_error("Answer yes or no." if self.yes_no else "Type an answer first.")
            return
        elif self.yes_no:  # "sometimes": the task checks it; the reply stands until it is taken
            self.post_message(self.Submitted(text, role=role, via=via, pressed=pressed, raw=typed))
            return
        self.replying = None
        self.pending = None
        self.post_message(self.Submitted(text, role=role, via=via, pressed=pressed, raw=typed))
        self._redraw()


TASK_VIEWS = {"twenty-questions": ChatView, "guess-city": ChatView}
