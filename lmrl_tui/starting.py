"""Opening an episode: the sides of a choice made in the new-episode dialog, and the recorded
session. No widgets here: the dialog and the app both use it.

Failures that belong to one of the dialog's fields are raised as :class:`FieldError` naming that
field, so the dialog shows the message under it and keeps the form.
"""

from __future__ import annotations

import gc
import getpass
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import envs
from data.session import PlaySession
from data.store import Store
from envs.core import Agent
from envs.players.agents import (
    HUMAN,
    MODEL_KINDS,
    POLICY_ALIASES,
    agent_choices,
    learnt_task_options,
    make_agent,
    make_model_agent,
    model_kind,
    uses_default_loader,
)
from envs.players.process_agent import ProcessAgent
from envs.players.session import HumanAgent

PARTNER_EMBEDDED = "embedded"


# -- the text of the form's fields --------------------------------------------------------------
def default_player() -> str:
    try:
        return getpass.getuser() or "player"
    except Exception:  # noqa: BLE001 - no login name in some containers
        return "player"


def parse_options(text: str) -> dict[str, Any] | None:
    """``key=value`` pairs separated by spaces or commas (``words=small``); blank means None."""
    from envs.core import parse_option

    parts = [p for p in text.replace(",", " ").split() if p]
    return dict(parse_option(p) for p in parts) if parts else None


def parse_seed(text: str) -> int | None:
    """Blank means a random seed; otherwise a non-negative integer below 2**63."""
    text = text.strip()
    if not text:
        return None
    try:
        seed = int(text)
    except ValueError:
        raise ValueError(f"the seed must be a whole number, not {text!r}") from None
    if not 0 <= seed < 2**63:
        raise ValueError("the seed must be between 0 and 2**63 - 1")
    return seed


class FieldError(Exception):
    """A choice that cannot be used; ``field`` is the dialog field's id (None: the whole form)."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class PlayRequest:
    """One configured episode: the task, the seed (None: random) and the dialog's fields."""

    task_id: str
    seed: int | None
    fields: dict[str, Any] = field(default_factory=dict)
    campaign: tuple[str, str] | None = None
    """The campaign and assignment the episode is played for (``lmrl serve --campaign``)."""
    pair: str | None = None
    """Play with another person (``--vs paired``): the side asked for, or ``any``."""
    pair_wait: float | None = None
    """Seconds to wait for that person before playing the built-in side instead (None: no end)."""
    options: dict[str, Any] | None = None
    """The task options of a paired episode (both people play the same)."""


@dataclass
class EpisodeChoice:
    task_id: str
    seed: int | None
    agent: str
    partner: str
    player: str
    strict: bool
    options: dict[str, Any] | None = None
    """Task options; None: the defaults (or a checkpoint agent's own)."""
    campaign: tuple[str, str] | None = None
    """The campaign and assignment it is played for."""


def partner_role(task_id: str) -> str:
    roles = envs.spec(task_id).roles
    return roles[1] if len(roles) > 1 else "partner"


def needs_loading(choice: EpisodeChoice) -> bool:
    """Whether the sides load slowly (a checkpoint or a model: torch, a network): load them in a
    worker thread. Scripted policies and people are ready at once."""
    simple = {HUMAN, *envs.policies(choice.task_id)}
    return choice.agent not in simple or choice.partner not in (HUMAN, PARTNER_EMBEDDED)


def loading_note(choice: EpisodeChoice) -> str:
    """What the new-episode dialog shows at once while :func:`load_sides` runs in its worker."""
    what = (
        "the model"
        if choice.agent.startswith(("hf:", "http:", "guided:"))
        or choice.agent in (HUMAN, *envs.policies(choice.task_id))
        else "checkpoint"
    )
    return f"Loading {what} … (escape: cancel)"


@contextmanager
def quiet_collector() -> Iterator[None]:
    """Around a model load in a worker thread. Importing torch and transformers and building a
    model makes millions of objects, and every full garbage collection then walks them all while
    holding the GIL: the UI froze for up to 300 ms at a time, during the load and on every later
    collection (bench/bench_watch.py). No collections during the load, then the objects alive
    are frozen (``gc.freeze``: later collections skip them)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


PROCESS_KINDS = frozenset({"checkpoint", "hf", "guided"})
"""Model kinds the app runs in their own process (:class:`ProcessAgent`): torch never enters the
app's process. Only with their built-in loaders (a loader registered in their place, e.g. a
test's fake, runs in this process)."""

Started = Callable[[ProcessAgent], None]
"""Told of each agent process as it starts, before its load (to stop it if the person cancels)."""


def _loaded_here(make: Callable[[], Agent | None], slow: bool) -> Agent | None:
    if not slow:
        return make()
    with quiet_collector():
        return make()


def _in_own_process(task_id: str, value: str, role: str, started: Started | None) -> Agent | None:
    """``value`` as a :class:`ProcessAgent`, loaded; None when it does not run in a process."""
    kind = model_kind(task_id, value)
    if kind not in PROCESS_KINDS or not uses_default_loader(kind):
        return None
    agent = ProcessAgent(value, task_id, role)
    if started is not None:
        started(agent)
    return agent.load()


def load_sides(
    choice: EpisodeChoice, started: Started | None = None
) -> tuple[Agent | None, Agent | None]:
    """The agent (None: a person) and a model partner (None: embedded or a person) of ``choice``
    (a slow load: in a worker thread). Checkpoints and ``hf:`` models load in their own process;
    ``started`` hears of each such process as it starts. A model loaded in this process (another
    kind, or a loader registered in place of the built-in one) loads under :func:`quiet_collector`."""
    role = envs.spec(choice.task_id).roles[0]
    try:
        agent = _in_own_process(choice.task_id, choice.agent, role, started) or _loaded_here(
            lambda: make_agent(choice.task_id, choice.agent, role=role), needs_loading(choice)
        )
    except Exception as e:  # noqa: BLE001 - any loader failure is the agent field's message
        raise FieldError(
            "checkpoint" if choice.agent not in envs.policies(choice.task_id) else "agent", str(e)
        ) from e
    partner = None
    if choice.partner not in (HUMAN, PARTNER_EMBEDDED):
        try:
            partner = _in_own_process(
                choice.task_id, choice.partner, partner_role(choice.task_id), started
            ) or _loaded_here(
                lambda: (
                    make_model_agent(choice.partner, role=partner_role(choice.task_id))
                    or make_agent(choice.task_id, choice.partner, role=partner_role(choice.task_id))
                ),
                True,
            )
        except Exception as e:  # noqa: BLE001 - the partner field's message
            close_agent(agent)
            raise FieldError("partner-model", str(e)) from e
    return agent, partner


def close_agent(agent: Any) -> None:
    """Release what an agent holds (a model's process); nothing for agents that hold nothing."""
    close = getattr(agent, "close", None)
    if callable(close):
        close()


def open_choice(
    store: Store, choice: EpisodeChoice, agent: Agent | None, model_partner: Agent | None
) -> PlaySession:
    """Make and start the recorded session of ``choice`` with its loaded sides."""
    partner: Agent | None = model_partner
    if choice.partner == HUMAN:
        partner = HumanAgent(choice.player if agent is not None else f"{choice.player} (partner)")
    try:
        return open_session(
            store,
            choice.task_id,
            agent,
            partner,
            choice.seed,
            choice.player,
            choice.strict,
            choice.agent,
            choice.options,
            campaign=choice.campaign,
        )
    except ValueError as e:  # a task option the task does not take, or a bad value
        raise FieldError("options", str(e)) from e
    except Exception as e:  # noqa: BLE001 - e.g. Stockfish missing: one line under the form
        raise FieldError(None, f"{type(e).__name__}: {e}") from e


def open_session(
    store: Store,
    task_id: str,
    agent: Agent | None,
    partner: Agent | None,
    seed: int | None,
    player: str | None,
    strict: bool = False,
    agent_choice: str | None = None,
    options: dict[str, Any] | None = None,
    *,
    campaign: tuple[str, str] | None = None,
) -> PlaySession:
    """Make and start a recorded session (``options``: by default a checkpoint agent's own;
    ``campaign``: the campaign and assignment it is played for)."""
    if options is None:
        options = learnt_task_options(agent, task_id) or {}
    if isinstance(partner, HumanAgent):
        partner.role = partner_role(task_id)
    session = PlaySession(
        store,
        task_id,
        agent=agent,
        partner=partner,
        player=player if (agent is None or partner is not None) else None,
        seed=seed,
        strict=strict,
        agent_choice=agent_choice,
        options=options,
        campaign=campaign,
    )
    session.start()
    return session


def agent_label(task_id: str, agent: Any, choice: str | None = None) -> str:
    """The one name of an agent, as the dialog lists it (``Scripted strong (optimal)``); a model
    or checkpoint by its kind and name."""
    kind = getattr(agent, "kind", "agent")
    if kind == HUMAN:  # a person at another screen (a paired episode)
        return f"{getattr(agent, 'name', '?')} (a person)"
    if kind not in MODEL_KINDS:
        labels = {value: label for label, value in agent_choices(task_id) if value != HUMAN}
        for key in (choice, getattr(agent, "name", None)):
            if key is not None and POLICY_ALIASES.get(key, key) in labels:
                return labels[POLICY_ALIASES.get(key, key)]
    return f"{kind}:{getattr(agent, 'name', '?')}"
