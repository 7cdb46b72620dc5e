"""The play screen: one episode, a human or an agent acting, every step recorded as it happens.

Slow work (an agent thinking, an engine or partner replying) runs in a thread worker; pure
simulators without a partner (maze, Wordle, Text-Nav) step at once on the UI thread, which keeps
fast key presses in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.markup import escape
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Header, Log, Static

from data.session import PlaySession
from envs.core import InvalidInput, Text
from envs.players.session import HumanAgent, SessionClosed, StepOutcome
from lmrl_tui.messages import PlayAgainRequested
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.screens.footer import Footer
from lmrl_tui.screens.info import HelpScreen, SummaryScreen, about_markdown
from lmrl_tui.screens.leave import LeavingEpisode
from lmrl_tui.screens.turn import Turn
from lmrl_tui.screens.watching import SPEEDS, WatchControls
from lmrl_tui.starting import agent_label
from lmrl_tui.views import view_class
from lmrl_tui.views.base import TaskView
from lmrl_tui.views.overlay import ValueOverlay
from lmrl_tui.views.redraw import GrowingLog, update_static

THINKING_NOTE_AFTER = 0.15
"""Seconds an agent's step runs before the status says it is thinking."""


class PlayScreen(LeavingEpisode, WatchControls, LmrlScreen, Screen[None]):
    """One episode: the task's view, whose turn it is, what the model sees, the moves so far."""

    BINDINGS = [
        Binding("question_mark,f1", "help", "Help", id="play.help"),
        Binding("space", "step_agent", "Step", id="play.step"),
        Binding("p", "toggle_auto", "Auto-play", id="play.auto"),
        Binding("plus,equals_sign", "faster", "Faster", id="play.faster"),
        Binding("minus", "slower", "Slower", id="play.slower"),
        Binding("v", "toggle_values", "Values", id="play.values"),
        Binding("t,ctrl+t", "take_over", "Take over", id="play.takeover"),
        Binding("m", "policy_map", "Policy map", id="play.policymap"),
        Binding("escape", "leave", "Leave", id="play.leave"),
    ]
    WORKER_ERRORS = WatchControls.WORKER_ERRORS

    turn: var[Turn] = var(Turn.WATCHING, init=False, always_update=True)
    """Whose move is awaited, or which step is in flight (:mod:`lmrl_tui.screens.turn`); setting
    it redraws (:meth:`watch_turn`)."""

    class StepTaken(Message, bubble=False):
        """A step was played and recorded (by the worker that waited for the agent or partner)."""

        def __init__(self, outcome: StepOutcome) -> None:
            super().__init__()
            self.outcome = outcome

    class InputRejected(Message, bubble=False):
        """The person's input was not a move (the worker's task said why); nothing was recorded."""

        def __init__(self, reason: str) -> None:
            super().__init__()
            self.reason = reason

    class ReplyRequested(Message, bubble=False):
        """The worker waits for the person playing ``role`` (the partner side) to answer."""

        def __init__(self, role: str, history: Sequence[Text]) -> None:
            super().__init__()
            self.role = role
            self.history = history

    def __init__(self, session: PlaySession) -> None:
        super().__init__()
        self.session = session
        spec = session.task.spec
        humans = set()
        if session.human_acts:
            humans.add(spec.roles[0])
        if isinstance(session.partner, HumanAgent) and len(spec.roles) > 1:
            humans.add(spec.roles[1])
        self.human_roles = frozenset(humans)
        self.view: TaskView = view_class(spec.id)(spec, human_roles=self.human_roles, id="view")
        # Watching an agent alone: step by hand; with a person in the game the agent moves by itself.
        self.auto = bool(humans)
        self.speed_index = 2
        self.set_reactive(PlayScreen.turn, Turn.HUMAN if session.human_acts else Turn.WATCHING)
        self._auto_timer: Any = None
        self.needs_worker = spec.partner is not None or not session.human_acts
        self._init_watch()

    # -- layout ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            yield self.view
            with Vertical(id="side"):
                yield Static(id="status")
                yield ValueOverlay(id="overlay")
                yield Static("What the model sees", id="model-title")
                with VerticalScroll(id="model"):
                    yield Static(id="model-text", markup=False)
                yield GrowingLog(id="moves")
        yield Footer()

    def on_mount(self) -> None:
        s = self.session
        self.title = s.task.spec.title
        if isinstance(s.partner, HumanAgent):
            s.partner.on_request = self._partner_request_from_thread
        if s.episode_id is None:
            s.start()
        line = self.lmrl_app.campaign_line if s.campaign else None  # their place in a campaign
        self.sub_title = f"episode {s.episode_id} · seed {s.seed}" + (f" · {line}" if line else "")
        for n, out in enumerate(s.transitions, 1):  # a resumed episode: the moves so far
            self._log_move(out, n)
        if s.transitions:
            self.query_one("#moves", Log).write_line("     (resumed here)")
        self._refresh()  # the first draw
        self._next_turn()
        self.call_after_refresh(self.lmrl_app.freeze_garbage)

    # -- drawing --------------------------------------------------------------------------------
    def watch_turn(self, old: Turn, new: Turn) -> None:
        """Redraw for the turn, also when it stays (a step played at once); a step just sent to its
        worker draws nothing yet (what it plays will)."""
        if not new.in_flight or old.in_flight:
            self._refresh()

    def _refresh(self) -> None:
        s = self.session
        state = s.state()
        state.setdefault("model_text", s.model_text())
        self.view.show_state(state)
        who = (
            (s.player or "you") if s.human_acts else agent_label(s.task_id, s.agent, s.agent_choice)
        )
        roles = s.task.spec.roles
        if isinstance(s.partner, HumanAgent) and len(roles) > 1:  # a person on the other side too
            who = f"{roles[0]}: {who} · {roles[1]}: {s.partner.name} (a person)"
        mode = ""
        if not s.a_person_acts:
            mode = f"  auto-play {'on' if self.auto else 'off'} ({SPEEDS[self.speed_index]:g}s)"
        hidden = {"partner"} | ({"secret"} if s.human_acts else set())  # a guesser must not see it
        opts = ", ".join(f"{k}={v}" for k, v in sorted(s.options.items()) if k not in hidden)
        note = self.watch_status()
        update_static(
            self.query_one("#status", Static),
            f"[b]{escape(s.task.spec.title)}[/b]{escape(f' ({opts})') if opts else ''}\n"
            f"Player: {escape(who)}{mode}\n"
            f"{self._turns()}\n"
            f"Return: {s.total_return:g}" + (f"\n{note}" if note else ""),
        )
        update_static(self.query_one("#model-text", Static), s.model_text())
        model = self.query_one("#model", VerticalScroll)  # laid out first, else it lands short
        self.call_after_refresh(model.scroll_end, animate=False)

    def _turns(self) -> str:
        """``Turn: n / cap``; the step that only says the time is up is not a turn past the cap."""
        s = self.session
        n, cap = len(s.transitions), s.task.spec.max_turns
        last = s.transitions[-1].step if s.transitions else None
        limit = " (time limit)" if s.done and last is not None and last.truncated else ""
        return f"Turn: {min(n, cap)} / {cap}{limit}"

    def _log_move(self, out: StepOutcome, n: int | None = None) -> None:
        st = out.step
        action = out.action.rstrip("\n")
        extra = "  (invalid)" if st.info.get("invalid") else ""
        note = self.view.step_note(st.info, self.session.state()) if n is None else None
        if note:
            extra += f"  ({note})"
        number = len(self.session.transitions) if n is None else n
        self.query_one("#moves", Log).write_line(
            f"{number:>3}. {action[:60]}  r={st.reward:g}{extra}"
        )

    # -- turns --------------------------------------------------------------------------------
    def _next_turn(self) -> None:
        s = self.session
        if s.done:
            self.view.set_turn(None, False)
            self._show_summary()
            return
        role = s.task.spec.roles[0]
        person = self.turn is not Turn.WATCHING  # HUMAN or TAKEN_OVER: no step is in flight here
        # an agent that waits for a key (auto-play off, a cancelled move) is not said to think
        self.view.agent_paused = not (person or self.auto)
        if person:
            self.view.set_turn(role, True)
        else:
            self.view.set_turn(role, False)
            if self.auto:
                self._schedule_agent()

    def _awaited(self) -> Turn:
        """The turn once no step is in flight: whose move is awaited."""
        return (
            Turn.HUMAN
            if self.session.human_acts
            else Turn.TAKEN_OVER
            if self.takeover
            else Turn.WATCHING
        )

    def on_task_view_submitted(self, event: TaskView.Submitted) -> None:
        event.stop()
        s = self.session
        if not event.typed.strip():  # an empty Enter is no move (nothing is played or stored)
            return
        role = s.task.spec.roles[0] if event.role == "agent" else event.role
        for hint in self.view.hints_shown():
            s.note_hint(hint)
        if role != s.task.spec.roles[0] and isinstance(s.partner, HumanAgent):
            try:
                reply = s.task.parse_reply(event.typed)
            except InvalidInput as e:
                self.view.show_error(str(e))
                return
            s.partner.answer(reply, typed=event.raw, via=event.via, pressed=event.pressed)
            self.view.set_turn(s.task.spec.roles[0], s.human_acts)
            return
        how = (event.via, event.pressed)
        if self.turn is Turn.TAKEN_OVER and not s.done:
            self.take_over_step(event.typed, event.chosen, how)
            return
        if self.turn is not Turn.HUMAN or s.done:
            return
        if self.needs_worker:
            self.turn = Turn.HUMAN_MOVING
            self.view.set_turn(s.task.spec.roles[0], False)
            self._human_step_worker(event.typed, how)
        else:
            self._apply_human(event.typed, how)

    def on_task_view_hint_shown(self, event: TaskView.HintShown) -> None:
        event.stop()
        self.session.note_hint(event.name)

    def _apply_human(self, typed: str, how: tuple[str, str | None] = ("typed", None)) -> None:
        try:
            out = self.session.human_input(typed, via=how[0], pressed=how[1])
        except InvalidInput as e:
            self.view.show_error(str(e))
            return
        self._after_step(out)

    @work(thread=True, exclusive=True, group="step", exit_on_error=False)
    def _human_step_worker(self, typed: str, how: tuple[str, str | None] = ("typed", None)) -> None:
        try:
            out = self.session.human_input(typed, via=how[0], pressed=how[1])
        except InvalidInput as e:  # not a failure: the person is told and types again
            self.post_message(self.InputRejected(str(e)))
            return
        except SessionClosed:  # the person left while a reply was awaited: nothing to report
            return
        self.post_message(self.StepTaken(out))

    def on_play_screen_input_rejected(self, message: PlayScreen.InputRejected) -> None:
        awaited = self._awaited()
        self.set_reactive(PlayScreen.turn, awaited)  # nothing played: no redraw, the view says why
        self.view.show_error(message.reason)
        if awaited is Turn.WATCHING:  # refused after the agent was given its side back: its move
            return self._next_turn()
        self.view.set_turn(self.session.task.spec.roles[0], True)

    def action_step_agent(self) -> None:
        s = self.session
        if self.turn is not Turn.WATCHING or s.done:
            return
        self.turn = Turn.AGENT_THINKING
        if self.view.agent_paused:  # stepped by hand: now it does think
            self.view.agent_paused = False
            self.view.set_turn(s.task.spec.roles[0], False)
        played = len(s.transitions)
        self.set_timer(THINKING_NOTE_AFTER, lambda: self._show_thinking(played))
        self._agent_step_worker()

    def _show_thinking(self, played: int) -> None:
        """Say "thinking …" once a step takes a while (a fast agent's steps do not flicker)."""
        if self.thinking and len(self.session.transitions) == played and self.is_mounted:
            self._refresh()  # a redraw, the turn unchanged

    def on_play_screen_step_taken(self, message: PlayScreen.StepTaken) -> None:
        self._after_step(message.outcome)

    def _after_step(self, out: StepOutcome) -> None:
        self._log_move(out)
        self.turn = self._awaited()
        self.request_explanation()
        self._next_turn()

    def worker_failed(self, group: str, error: BaseException) -> None:
        # The step failed (reported): stop auto-play so that it is not retried in a loop.
        if group == "explain":
            self.overlay.show_note(f"No values: {type(error).__name__}: {error}")
            return
        self.auto = False
        self.turn = self._awaited()
        self._next_turn()  # give the turn back (a person can try again after a partner failed)

    def _partner_request_from_thread(self, role: str, history: Sequence[Text]) -> None:
        # Called by the HumanAgent partner, in the step worker's thread.
        self.post_message(self.ReplyRequested(role, history))

    def on_play_screen_reply_requested(self, message: PlayScreen.ReplyRequested) -> None:
        self.turn = Turn.REPLYING  # the acting side has moved: the person partner's turn
        self.view.request_reply(message.role, message.history)

    # -- end ----------------------------------------------------------------------------------
    def _show_summary(self) -> None:
        s = self.session
        state = s.state()
        lines = [
            f"Return: [b]{s.total_return:g}[/b]",
            f"Steps: {len(s.transitions)}",
        ]
        said = (
            self.view.result_text()
        )  # e.g. a walk-away in Car Dealer is no "failure" to the seller
        if said:
            lines.append(f"Result: [{'green' if s.success else 'yellow'}]{escape(said)}[/]")
        elif s.success is not None:
            lines.append(
                "Result: " + ("[green]success[/green]" if s.success else "[red]failure[/red]")
            )
        if "optimal_return" in state:
            lines.append(f"Best possible return from this start: {state['optimal_return']:g}")
        if "answer" in state and state.get("done"):
            lines.append(f"Answer: {escape(str(state['answer']))}")
        lines.append(f"Saved as episode {s.episode_id} (seed {s.seed}).")
        self.app.push_screen(SummaryScreen(lines, "Episode over"), self._summary_choice)

    def _summary_choice(self, choice: str | None) -> None:
        if choice == "home" or choice is None:
            self.app.pop_screen()
            return
        seed = self.session.seed if choice == "same" else None
        self.post_message(PlayAgainRequested(self.session, seed))

    # -- actions ------------------------------------------------------------------------------
    _AGENT_ONLY = frozenset(
        {
            "step_agent",
            "toggle_auto",
            "faster",
            "slower",
            "toggle_values",
            "take_over",
            "policy_map",
        }
    )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the watch controls (step, auto-play, speed) while a person is the acting side."""
        if action in self._AGENT_ONLY and self.session.human_acts:
            return False
        if action == "take_over" and isinstance(self.session.partner, HumanAgent):
            return False  # a person plays the other side: the keyboard is theirs, never a takeover
        if action == "policy_map" and not hasattr(self.view, "show_policy_map"):
            return False  # a map of moves per cell: the maze's view draws one
        return True

    def action_help(self) -> None:
        spec = self.session.task.spec
        text = (
            (spec.help or f"# {spec.title}\n\n{spec.summary}")
            + "\n\n---\n"
            + about_markdown(self.session.store.path)
        )
        self.app.push_screen(HelpScreen(text))

    def _end_and_pop(self) -> None:
        """Abandon (unless it ended) before leaving: the home screen reads the store as it shows."""
        self._stop_episode()
        self.app.pop_screen()

    def _stop_episode(self) -> None:
        self._stop_auto()
        self.session.abandon()

    def on_unmount(self) -> None:
        self._stop_episode()
        self.close_engine()
        self._release_models()
