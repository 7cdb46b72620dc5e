"""The new-episode dialog's fields for a person who plays one side of a task against someone
(``lmrl play --as --vs``, ``lmrl serve --task``, a campaign's assignment). Light: nothing here
imports textual or the app at import time."""

from __future__ import annotations

from typing import Any

BUILT_IN = ("built-in", "builtin", "embedded")
PERSON = ("person", "human", "hot-seat")


class PlayFlagsError(ValueError):
    """Flags that do not make an episode (one line for the command's error)."""


def play_fields(
    task_id: str, as_role: str | None, vs: str | None, options: list[tuple[str, Any]] | None = None
) -> dict[str, Any]:
    """The new-episode dialog's fields for a person playing ``as_role`` of ``task_id`` against
    ``vs`` (the rules: :mod:`lmrl_tui.cli.play`)."""
    import envs
    from envs.players.agents import HUMAN
    from lmrl_tui.starting import PARTNER_EMBEDDED

    spec = envs.spec(task_id)  # an unknown task: UnknownTask, the command's one line
    roles = tuple(spec.roles)
    role = as_role or roles[0]
    if role not in roles:
        raise PlayFlagsError(f"{task_id}: --as takes {' or '.join(roles)}, not {role!r}")
    policies = envs.policies(task_id)
    fields: dict[str, Any] = {
        "agent": HUMAN,
        "checkpoint": "",
        "partner": PARTNER_EMBEDDED,
        "partner_model": "",
        "strict": False,
    }
    if role == roles[0]:
        if vs is None or vs in BUILT_IN:
            pass
        elif len(roles) < 2:
            raise PlayFlagsError(f"{task_id} has one side: --vs does not apply")
        elif vs in PERSON:
            fields["partner"] = HUMAN
        elif vs in policies:
            raise PlayFlagsError(
                f"the {roles[1]} of {task_id} is built in or a person or a model; "
                f"scripted policies play the {roles[0]} (use --as {roles[1]} --vs {vs})"
            )
        else:
            fields["partner_model"] = vs
    else:
        fields["partner"] = HUMAN
        who = vs or "strong"
        if who in PERSON:
            fields["agent"] = HUMAN
        elif who in BUILT_IN:
            raise PlayFlagsError(
                f"the {roles[0]} has no built-in player: --vs takes {', '.join(policies)}, "
                "person, a checkpoint folder, hf:MODEL or http:MODEL@BASE_URL"
            )
        elif who in policies or who in ("optimal",):
            fields["agent"] = "strong" if who == "optimal" else who
        else:
            fields["agent"], fields["checkpoint"] = "strong", who
    if options:
        from envs.core.options import show_value

        fields["options"] = " ".join(f"{k}={show_value(v)}" for k, v in options)
    return fields
