"""The play screen's turn (:attr:`lmrl_tui.screens.play.PlayScreen.turn`): whose move is awaited,
or which step is being played in a worker. Auto-play (on or off) and its speed are settings beside
it; whether the episode is over is the session's.

Awaited (the acting side's move)::

    HUMAN        the person plays the acting side
    WATCHING     the agent plays it: space steps it, or auto-play's timer
    TAKEN_OVER   the person plays the agent's moves (t)

In flight (keys and input wait until the step lands; escape cancels only the agent's)::

    HUMAN_MOVING       HUMAN's move, checked and played in a worker (with the partner's reply)
    AGENT_THINKING     the agent's step (space or the timer from WATCHING)
    REPLYING           either step waits for the person playing the partner side (hot-seat)
    TAKEN_OVER_MOVING  TAKEN_OVER's move, played in a worker (the agent's proposal is asked first)
    HANDING_BACK       that move still in flight, the agent given its side back (t or p meanwhile)

A step that lands (or fails, or is cancelled) leaves the turn awaited again: HUMAN, TAKEN_OVER
or WATCHING. A refused move goes back without a redraw (the view says why); t and p move between
TAKEN_OVER and WATCHING, and between TAKEN_OVER_MOVING and HANDING_BACK.
"""

from __future__ import annotations

from enum import Enum, auto


class Turn(Enum):
    HUMAN = auto()
    WATCHING = auto()
    TAKEN_OVER = auto()
    HUMAN_MOVING = auto()
    AGENT_THINKING = auto()
    REPLYING = auto()
    TAKEN_OVER_MOVING = auto()
    HANDING_BACK = auto()

    @property
    def in_flight(self) -> bool:
        """A step is being played in a worker."""
        return self not in (Turn.HUMAN, Turn.WATCHING, Turn.TAKEN_OVER)

    @property
    def taken_over(self) -> bool:
        """The person plays the agent's moves."""
        return self in (Turn.TAKEN_OVER, Turn.TAKEN_OVER_MOVING)
