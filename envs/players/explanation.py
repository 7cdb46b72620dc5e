"""What a model agent thinks of a state, as plain data: no torch, so the app can draw it and an
agent in another process can send it (the training package computes it).

:class:`Explanation` holds the top candidate actions of one state with their values or
probabilities; :func:`explanation_to_dict` / :func:`explanation_from_dict` carry it over JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ARROWS = {"move up\n": "↑", "move down\n": "↓", "move left\n": "←", "move right\n": "→"}
"""A maze action as the policy map draws it."""


@dataclass
class Candidate:
    """One candidate action and what the checkpoint thinks of it (plain floats)."""

    action: str
    q: float | None
    v: float | None
    advantage: float | None
    prob: float
    """Probability under the agent's sampling policy, renormalised over the candidates."""
    beta_prob: float
    """Probability under π_β (the BC/policy head), renormalised over the candidates."""


@dataclass
class Explanation:
    """The top candidates of one state (best first: by advantage for value checkpoints, by
    probability for policy ones)."""

    algo: str
    kind: str
    """``value`` (Q, V, A shown) or ``policy`` (probabilities only)."""
    candidates: list[Candidate]
    rl_choice: str | None
    bc_choice: str | None
    state_value: float | None = None
    source: str = "legal actions"
    """Where the candidates came from: ``legal actions`` or ``samples``."""
    total: int = 0
    """How many candidates were scored (``candidates`` holds the top ones)."""
    notes: list[str] = field(default_factory=list)


def explanation_to_dict(expl: Explanation) -> dict[str, Any]:
    """``expl`` as JSON-serialisable data."""
    return asdict(expl)


def explanation_from_dict(data: dict[str, Any]) -> Explanation:
    """The :class:`Explanation` :func:`explanation_to_dict` made."""
    fields = dict(data)
    fields["candidates"] = [Candidate(**c) for c in fields.get("candidates", [])]
    fields["notes"] = list(fields.get("notes", []))
    return Explanation(**fields)
