"""A checkpoint chosen with the decoding settings ``lmrl eval`` takes, written after its folder:
``runs/mc --decoding rerank --no-repeat``. The same text works wherever a checkpoint is chosen (the
app's model fields, ``lmrl play --policy``, ``lmrl generate --policy``), so the agent a user
watches or plays against is the one they evaluated. Pure text handling: no torch here.
"""

from __future__ import annotations

import shlex
from typing import Any

DECODINGS = ("sample", "greedy", "rerank", "rerank_sample")
_VALUED: dict[str, tuple[str, type]] = {
    "--decoding": ("decoding", str),
    "--beta": ("beta", float),
    "--temperature": ("temperature", float),
    "--logit-weight": ("logit_weight", float),
    "--top-k": ("top_k", int),
    "--max-new-tokens": ("max_new_tokens", int),
}
_SWITCHES = {"--no-repeat": ("no_repeat", True), "--repeat": ("no_repeat", False)}
SETTINGS_HELP = (
    "--decoding sample|greedy|rerank|rerank_sample, --beta B, --temperature T, --logit-weight W, "
    "--top-k K, --max-new-tokens N, --no-repeat, --repeat"
)


class CheckpointSettingsError(ValueError):
    """Settings after a checkpoint folder that cannot be used, explained in one line."""


def checkpoint_folder(choice: str) -> str:
    """The folder part of a checkpoint choice (all of it when no settings follow)."""
    return choice.partition(" --")[0].strip() if " --" in choice else choice


def split_checkpoint_choice(choice: str) -> tuple[str, dict[str, Any]]:
    """``"runs/mc --decoding rerank --no-repeat"`` -> ``("runs/mc", {"decoding": "rerank",
    "no_repeat": True})``: the folder and the settings, as keyword arguments of the checkpoint
    kind's loader. Settings start at the first `` --``; ``--flag value`` and
    ``--flag=value`` both work. Raises :class:`CheckpointSettingsError` for an unknown setting or a
    bad value."""
    folder = checkpoint_folder(choice)
    if folder == choice:
        return choice, {}
    try:
        tokens = shlex.split(choice[choice.index(" --") :])
    except ValueError as e:
        raise CheckpointSettingsError(f"cannot read the settings after {folder!r}: {e}") from None
    settings: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        name, eq, value = tokens[i].partition("=")
        i += 1
        if name in _SWITCHES and not eq:
            key, flag = _SWITCHES[name]
            settings[key] = flag
            continue
        if name not in _VALUED:
            raise CheckpointSettingsError(
                f"unknown checkpoint setting {tokens[i - 1]!r}: after the folder, "
                f"use {SETTINGS_HELP}"
            )
        if not eq:
            if i >= len(tokens) or tokens[i].startswith("--"):
                raise CheckpointSettingsError(f"{name} needs a value")
            value = tokens[i]
            i += 1
        key, kind = _VALUED[name]
        settings[key] = _checked(name, kind, value)
    return folder, settings


def _checked(name: str, kind: type, value: str) -> Any:
    if kind is str:
        if value not in DECODINGS:
            raise CheckpointSettingsError(f"{name} is one of {', '.join(DECODINGS)}, not {value!r}")
        return value
    try:
        out = kind(value)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise CheckpointSettingsError(f"{name} takes {what}, not {value!r}") from None
    if out != out or out in (float("inf"), float("-inf")):  # NaN or infinite
        raise CheckpointSettingsError(f"{name} takes a finite number, not {value!r}")
    if name == "--temperature" and out <= 0:
        raise CheckpointSettingsError(f"--temperature must be above 0, not {value}")
    if name in ("--beta", "--top-k") and out < 0:
        raise CheckpointSettingsError(f"{name} must be 0 or more, not {value}")
    if name == "--max-new-tokens" and out < 1:
        raise CheckpointSettingsError(f"--max-new-tokens must be at least 1, not {value}")
    return out


def settings_text(settings: dict[str, Any]) -> str:
    """The settings written back as flags (``--decoding rerank --no-repeat``), in a fixed order."""
    out = []
    for name, (key, _) in _VALUED.items():
        if key in settings and settings[key] is not None:
            out.append(f"{name} {settings[key]}")
    if settings.get("no_repeat") is not None:
        out.append("--no-repeat" if settings["no_repeat"] else "--repeat")
    return " ".join(out)
