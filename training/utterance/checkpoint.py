"""An utterance-level checkpoint: ``model.safetensors`` (the towers and heads), ``lmrl.json`` (as
every checkpoint: algorithm, task, the run's config with ``model: utterance``, step, metrics, and
the model's own settings under ``utterance``) and ``dataset.json`` (the query, the episode ids and
the candidate lines). Saved atomically; read without unpickling anything."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from safetensors.torch import load_file, save_file

from training.config import TrainConfig
from training.errors import TrainingError
from training.model.checkpoint import META
from training.utterance.features import BUCKETS

FORMAT = 1
WEIGHTS = "model.safetensors"
REPEATS_RARE = 0.05
"""Below this share of episodes that repeat a line, the agent never repeats one (behaviour policies
that sample their guesses repeat one now and then; a person or a seller who repeats on purpose
does so more often)."""


def is_utterance_checkpoint(folder: str | os.PathLike[str]) -> bool:
    """Whether the checkpoint folder holds an utterance-level model."""
    try:
        meta = json.loads((Path(folder) / META).read_text())
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and isinstance(meta.get("utterance"), dict)


def save_utterance(
    out: Path,
    model,
    cfg: TrainConfig,
    corpus,
    *,
    step: int,
    metrics: dict[str, Any],
    extra: dict[str, Any],
    dataset: dict[str, Any],
) -> Path:
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    save_file(
        {k: v.detach().contiguous() for k, v in model.state_dict().items()}, str(tmp / WEIGHTS)
    )
    meta = {
        "format": FORMAT,
        "algo": cfg.algo,
        "task": cfg.task,
        "step": step,
        "epoch": 0,
        "config": cfg.to_dict(),
        "metrics": metrics,
        "utterance": {**extra, "no_repeat": cfg.no_repeat or corpus.repeats < REPEATS_RARE},
    }
    (tmp / META).write_text(json.dumps(meta, indent=1, default=str))
    (tmp / "dataset.json").write_text(json.dumps(dataset, default=str))
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return out


def load_utterance_agent(
    folder: str | os.PathLike[str], *, beta: float | None = None, no_repeat: bool | None = None
):
    """The checkpoint at ``folder`` as an :class:`training.utterance.agent.UtteranceAgent`."""
    from training.utterance.agent import UtteranceAgent
    from training.utterance.model import UtteranceModel

    folder = Path(folder)
    try:
        meta = json.loads((folder / META).read_text())
        own = meta["utterance"]
        cfg = TrainConfig.from_dict(meta["config"])
        candidates = [
            a
            for a in json.loads((folder / "dataset.json").read_text()).get("actions") or []
            if isinstance(a, str)
        ]
        model = UtteranceModel(
            int(own["dim"]), int(own.get("buckets", BUCKETS)), bool(own.get("evidence", False))
        )
        state = load_file(str(folder / WEIGHTS))
        # checkpoints from before the said-before feature (its weights stay 0: no effect) or the
        # hindsight head (untrained there, and read only with the finishing facts they lack)
        state.update(
            {
                k: v
                for k, v in model.state_dict().items()
                if (k.endswith(".said") or k.startswith("aim.")) and k not in state
            }
        )
        model.load_state_dict(state)
    except (OSError, ValueError, KeyError, TypeError, RuntimeError) as e:
        raise TrainingError(f"{folder} is not a readable utterance-level checkpoint: {e}") from None
    given = {"beta": beta, "no_repeat": no_repeat}
    given = {k: v for k, v in given.items() if v is not None}
    name = f"{cfg.algo}:utterance:{folder.resolve().parent.name}/{folder.name}"
    info = {
        "path": str(folder),
        "task": cfg.task,
        "task_options": dict(cfg.task_options),
        "side": cfg.side,
        "model": "utterance",
        **({"settings": given} if given else {}),
    }
    if given:
        name += " " + " ".join(f"{k}={v}" for k, v in given.items())
    return UtteranceAgent(
        model,
        candidates,
        cfg.algo,
        name,
        info,
        no_repeat=bool(own.get("no_repeat", True)) if no_repeat is None else no_repeat,
        beta=cfg.beta if beta is None else beta,
        scale=float(own.get("scale", 1.0)),
        finishing=_finishing(own),
    )


def _finishing(own: dict[str, Any]):
    """The hindsight reader's facts of a ``--hindsight`` checkpoint (None: trained without)."""
    from training.utterance.agent import Finishing

    f = own.get("finishing")
    if not isinstance(f, dict) or not f.get("lines"):
        return None
    return Finishing(
        frozenset(str(x) for x in f["lines"]),
        float(f["reward"]),
        float(f["cost"]),
        float(f["gamma"]),
    )
