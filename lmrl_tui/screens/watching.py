"""Watching an agent on the play screen: auto-play, the value overlay, taking over, and the
thinking state.

* ``space`` steps the agent; ``p`` auto-plays (a step every ``SPEEDS[speed_index]`` seconds,
  ``+`` and ``-`` change it).
* ``v``: the value overlay (:class:`~lmrl_tui.views.overlay.ValueOverlay`): what a watched
  checkpoint thinks of the current state (its ``explain``: ``training.agents.explain``, in the agent's
  own process), asked for in a worker.
* ``m``: a policy map on a fully observed maze (the checkpoint's move from every free cell).
  In chess the overlay also gives Stockfish's evaluation of the position (its own engine process).
* ``t`` (or ``ctrl+t``): take over. The agent pauses and the person plays its moves; every such step records
  ``info["takeover"]``, what the agent would have played (``agent_proposed``, asked for in the
  worker before the person's move is accepted) and who took over; ``t`` or ``p`` hands back.
* While the agent thinks the status says so, and escape cancels the step (its result is dropped).

The agent's steps, the proposals and the overlay's numbers all use the model: one lock held in
their worker threads keeps them one at a time without ever blocking the event loop.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.message import Message
from textual.worker import get_current_worker

from envs.core import InvalidInput
from envs.players.explanation import ARROWS
from envs.players.process_agent import ProcessAgent
from envs.players.session import HumanAgent, SessionClosed
from lmrl_tui.screens.base import LmrlScreen
from lmrl_tui.screens.turn import Turn
from lmrl_tui.starting import close_agent
from lmrl_tui.views.overlay import ValueOverlay
from lmrl_tui.workers import ErrorToast

EXPLAINED_KINDS = ("checkpoint", "guided")
"""Agents whose overlay shows what they weighed (a checkpoint's values, a guided agent's
candidates and their predicted outcomes)."""

if TYPE_CHECKING:
    from data.session import PlaySession
    from lmrl_tui.views.base import TaskView

SPEEDS = (2.0, 1.0, 0.5, 0.25, 0.1, 0.03)
"""Auto-play's seconds between the agent's steps (the play screen starts at the third)."""


class WatchControls(LmrlScreen):
    """Mixin for :class:`~lmrl_tui.screens.play.PlayScreen` (it comes first in the bases); the
    play screen provides the methods stubbed at the end."""

    WORKER_ERRORS: ClassVar = {
        "step": ErrorToast("The step failed", timeout=8),
        "explain": ErrorToast("No values", in_place=True),  # the overlay says why
        "policy-map": ErrorToast("No policy map", timeout=6),
    }

    session: PlaySession
    view: TaskView
    turn: Turn
    auto: bool
    speed_index: int
    _auto_timer: Any

    show_values = False
    _model_lock: threading.Lock
    _proposal: tuple[int, str] | None = None
    _engine: Any = None
    ENGINE_DEPTH = 12
    DIM_AFTER = 0.25
    """Seconds the last state's numbers stay as they are before they dim as outdated: at auto-play
    speed the next ones come first, and redrawing the box dimmed cost a full render a step."""
    _dim_timer: Any = None

    class Explained(Message, bubble=False):
        """The overlay's numbers for the state after ``for_step`` steps (None: failed, see ``error``)."""

        def __init__(self, for_step: int, explanation: Any, engine: str | None = None) -> None:
            super().__init__()
            self.for_step = for_step
            self.explanation = explanation
            self.engine = engine
            """Stockfish's evaluation of a chess position, in words (None: not chess)."""

    class PolicyMapped(Message, bubble=False):
        """The watched agent's greedy move on every free cell of the maze."""

        def __init__(self, arrows: dict[tuple[int, int], str]) -> None:
            super().__init__()
            self.arrows = arrows

    def _init_watch(self) -> None:
        self._model_lock = threading.Lock()

    @property
    def overlay(self) -> ValueOverlay:
        return self.query_one("#overlay", ValueOverlay)

    @property
    def busy(self) -> bool:
        """A step is being played in a worker."""
        return self.turn.in_flight

    @property
    def thinking(self) -> bool:
        """The agent's step runs in its worker (escape cancels it)."""
        return self.turn is Turn.AGENT_THINKING

    @property
    def takeover(self) -> bool:
        """The person plays the agent's moves."""
        return self.turn.taken_over

    # what the play screen provides
    def _refresh(self) -> None: ...

    def _next_turn(self) -> None: ...

    def action_step_agent(self) -> None: ...

    # -- auto-play ------------------------------------------------------------------------------
    def action_toggle_auto(self) -> None:
        if self.session.human_acts:
            return
        if self.takeover:  # p hands back to the agent, which plays on by itself
            self.hand_back(auto=True)
            return
        self.auto = not self.auto
        if not self.auto:
            self._stop_auto()
        self._refresh()  # a setting, not the turn
        if not self.busy:  # schedules the agent (auto on) and says whether it waits for a key
            self._next_turn()

    def action_faster(self) -> None:
        self.speed_index = min(self.speed_index + 1, len(SPEEDS) - 1)
        self._refresh()

    def action_slower(self) -> None:
        self.speed_index = max(self.speed_index - 1, 0)
        self._refresh()

    def _schedule_agent(self) -> None:
        self._stop_auto()
        self._auto_timer = self.set_timer(SPEEDS[self.speed_index], self.action_step_agent)

    def _stop_auto(self) -> None:
        if self._auto_timer is not None:
            self._auto_timer.stop()

    # -- the value overlay ----------------------------------------------------------------------
    def action_toggle_values(self) -> None:
        self.show_values = not self.show_values
        self.overlay.set_class(self.show_values, "-shown")
        if self.show_values:
            self.request_explanation()

    def request_explanation(self) -> bool:
        """Start computing the overlay of the current state in a worker (True if started)."""
        s = self.session
        if not self.show_values or s.agent is None:
            return False
        if s.done:
            self.overlay.show_note("The episode is over.")
            return False
        checkpoint = getattr(s.agent, "kind", None) in EXPLAINED_KINDS
        if not checkpoint and "fen" not in s.state():
            self.overlay.show_note("Values are shown for trained checkpoints only.")
            return False
        if self.overlay.explanation is None:
            self.overlay.show_note("computing values …")
        else:  # the last state's numbers stay, then dimmed, until these come (no jumping box)
            self._stop_dimming()
            self._dim_timer = self.set_timer(self.DIM_AFTER, self.overlay.mark_updating)
        self._explain_worker(len(s.transitions))
        return True

    @work(thread=True, exclusive=True, group="explain", exit_on_error=False)
    def _explain_worker(self, for_step: int) -> None:
        s = self.session
        with self._model_lock:
            if len(s.transitions) != for_step or s.done:
                return  # the state moved on meanwhile: its own request follows
            legal = getattr(s.task, "legal_actions", None)
            # a failure is shown in the overlay by the play screen's worker_failed
            expl = None
            if getattr(s.agent, "kind", None) in EXPLAINED_KINDS:
                expl = s.agent.explain(s.task.history(), legal() if legal is not None else None)
            fen = s.state().get("fen")
            engine = self._evaluate(fen) if fen else None
        self.post_message(self.Explained(for_step, expl, engine))

    def _evaluate(self, fen: str) -> str:
        """Stockfish's evaluation of a chess position, from white's side (its own engine process,
        started on first use and stopped with the screen)."""
        import chess

        from envs.chess.stockfish import Engine, find_stockfish

        if self._engine is None:
            self._engine = Engine(find_stockfish())
        board = chess.Board(fen)
        mate, cp = self._engine.mate_in(board, self.ENGINE_DEPTH)
        sign = 1 if board.turn == chess.WHITE else -1
        if mate is not None:
            return f"Stockfish (depth {self.ENGINE_DEPTH}): mate in {abs(mate)} for {'white' if mate * sign > 0 else 'black'}"
        return (
            f"Stockfish (depth {self.ENGINE_DEPTH}): {sign * (cp or 0) / 100:+.2f} (white's view)"
        )

    def close_engine(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def _stop_dimming(self) -> None:
        if self._dim_timer is not None:
            self._dim_timer.stop()
            self._dim_timer = None

    def on_watch_controls_explained(self, message: WatchControls.Explained) -> None:
        if message.for_step != len(self.session.transitions):
            return  # an older state's numbers
        self._stop_dimming()
        if message.explanation is None:
            self.overlay.show_note((message.engine or "") + "\n(values: trained checkpoints only)")
        else:
            self.overlay.show_explanation(message.explanation, message.for_step, message.engine)

    # -- the policy map (fully observed mazes) ---------------------------------------------------
    def action_policy_map(self) -> None:
        show = getattr(self.view, "show_policy_map", None)
        if show is None or self.session.agent is None:
            return
        if getattr(self.view, "arrows", None):
            show(None)
            return
        if getattr(self.session.agent, "kind", None) != "checkpoint":
            self.notify("A policy map is drawn for trained checkpoints only.", timeout=3)
            return
        self._policy_map_worker()

    @work(thread=True, exclusive=True, group="policy-map", exit_on_error=False)
    def _policy_map_worker(self) -> None:
        with self._model_lock:
            chosen = self.session.agent.policy_map(self.session.task)
        self.post_message(self.PolicyMapped({rc: ARROWS.get(a, "?") for rc, a in chosen.items()}))

    def on_watch_controls_policy_mapped(self, message: WatchControls.PolicyMapped) -> None:
        show = getattr(self.view, "show_policy_map", None)
        if show is not None:
            show(message.arrows)

    # -- the agent's step, cancellable ------------------------------------------------------------
    @work(thread=True, exclusive=True, group="step", exit_on_error=False)
    def _agent_step_worker(self) -> None:
        worker = get_current_worker()
        s = self.session
        with self._model_lock:
            if worker.is_cancelled:
                return
            started = time.monotonic()
            try:
                action = s.agent_action()
                if worker.is_cancelled:  # cancelled while it thought: the move is dropped
                    return
                out = s.agent_step(action, int((time.monotonic() - started) * 1000))
            except SessionClosed:  # the person left while a reply was awaited: nothing to report
                return
        self.post_message(self.StepTaken(out))

    def cancel_thinking(self) -> None:
        """Drop the step the agent is thinking about; auto-play stops."""
        self.workers.cancel_group(self, "step")
        self.auto = False
        self._stop_auto()
        self.notify("Cancelled: the agent's move was not played.", timeout=3)
        self.turn = Turn.WATCHING
        self._next_turn()

    # -- taking over ------------------------------------------------------------------------------
    def action_take_over(self) -> None:
        s = self.session
        if s.agent is None or s.done or isinstance(s.partner, HumanAgent):
            return  # with a person as the partner, the keyboard is theirs
        if self.takeover:
            self.hand_back()
            return
        if self.thinking:
            self.cancel_thinking()
        self._stop_auto()
        self.notify(
            "You play the agent's moves now (t, ctrl+t in a text field, or p: hand back).",
            timeout=3,
        )
        self.turn = Turn.TAKEN_OVER_MOVING if self.busy else Turn.TAKEN_OVER
        if not self.busy:
            self._next_turn()

    def hand_back(self, auto: bool | None = None) -> None:
        """The agent plays again (``auto``: turn auto-play on or off; None: as it was)."""
        if auto is not None:
            self.auto = auto
        self.turn = Turn.HANDING_BACK if self.busy else Turn.WATCHING
        if not self.busy:
            self._next_turn()

    def take_over_step(
        self, typed: str, chosen: bool, how: tuple[str, str | None] = ("typed", None)
    ) -> None:
        """The person's move for the agent (``how``: via what and the key or button pressed):
        checked and played in a worker."""
        self.turn = Turn.TAKEN_OVER_MOVING
        self.view.set_turn(self.session.task.spec.roles[0], False)
        player = self.lmrl_app.player or "you"
        self._takeover_worker(typed, chosen, player, how)

    @work(thread=True, exclusive=True, group="step", exit_on_error=False)
    def _takeover_worker(
        self, typed: str, chosen: bool, player: str, how: tuple[str, str | None]
    ) -> None:
        s = self.session
        with self._model_lock:
            n = len(s.transitions)
            if self._proposal is None or self._proposal[0] != n:
                self._proposal = (n, s.agent_action())  # what the agent would have played here
            try:
                out = s.takeover_input(
                    typed, self._proposal[1], player, chosen=chosen, via=how[0], pressed=how[1]
                )
            except InvalidInput as e:
                self.post_message(self.InputRejected(str(e)))
                return
            except SessionClosed:
                return
        self.post_message(self.StepTaken(out))

    def watch_status(self) -> str:
        """The status line's note about the watch state ('' when there is none)."""
        if self.takeover:
            return "[b]You have taken over[/b] (t or p: hand back)"
        if self.thinking:
            return "[b]thinking …[/b] (escape: cancel)"
        return ""

    def _release_models(self) -> None:
        """Stop the model processes of this episode's sides, unless another screen plays on with
        them (play again reuses a loaded model)."""
        in_use = {
            id(side)
            for screen in self.app.screen_stack
            if screen is not self
            for side in (
                getattr(getattr(screen, "session", None), "agent", None),
                getattr(getattr(screen, "session", None), "partner", None),
            )
        }
        for side in (self.session.agent, self.session.partner):
            if isinstance(side, ProcessAgent) and id(side) not in in_use:
                close_agent(side)
