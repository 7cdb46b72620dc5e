"""A checkpoint as an envs Agent (kind ``"checkpoint"``): ``load_agent(path, **kw)``.

Tasks with enumerable actions are decoded with the reranker (``decoding="rerank"``), or by
sampling only among legal actions (``"rerank_sample"``); otherwise the agent generates text with
value-guided sampling and KV caches. On a task whose actions are free text (the dialogue tasks),
the reranking decodings choose among the *candidates*: the distinct actions of the checkpoint's
training data (kept in its ``dataset.json``), so a small model that cannot yet spell a question
still picks one the data asked, by its own scores.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from envs.core import Text, history_to_str
from envs.players.checkpoint_choice import settings_text
from training.config import action_token_limit
from training.decoding.decoder import Decoder


class CheckpointAgent:
    """Plays a task with a trained checkpoint."""

    kind = "checkpoint"

    def __init__(
        self,
        decoder: Decoder,
        name: str,
        meta: dict[str, Any],
        candidates: Sequence[str] | None = None,
        partner_model: Any = None,
    ) -> None:
        self.decoder = decoder
        self.name = name
        self.meta = meta
        self.candidates = list(candidates or [])
        """Actions to choose among where the task lists none (reranking decodings only)."""
        self.partner_model = partner_model
        """A checkpoint trained with ``--partner-model``: its :class:`training.datasets.partner_conditioned.PartnerModel`."""
        self._task = None
        self._gen = torch.Generator().manual_seed(0)

    @staticmethod
    def generator_for(seed: int | None) -> torch.Generator:
        """The generator an episode from ``seed`` draws its samples from."""
        return torch.Generator().manual_seed(0 if seed is None else int(seed) * 7919 + 13)

    def reset(self, task, seed: int | None = None) -> None:
        self._task = task
        self._gen = self.generator_for(seed)

    def play_many(
        self, task_id: str, seeds: Sequence[int], options: dict[str, Any] | None = None
    ) -> list:
        """The episodes of the consecutive ``seeds``, played side by side with one batched forward
        per turn (what ``lmrl generate`` stores for a checkpoint); each episode draws from its
        seed's generator, so they are those that playing one at a time gives."""
        from training.evaluation.evaluate import play_episodes

        return play_episodes(task_id, self, len(seeds), seeds[0], options, progress=False)

    def choices(self, task, history: Sequence[Text] | None = None) -> list[str] | None:
        """What the reranker chooses among in ``task``'s state: its legal actions, else the
        candidates (with ``no_repeat``, those the agent's turns in ``history`` did not say);
        None when the agent generates (a sampling decoding, or nothing to choose)."""
        if self.decoder.decoding not in ("rerank", "rerank_sample"):
            return None
        legal = task.legal_actions() if task is not None else None
        if legal:
            return list(legal)
        if not self.candidates:
            return None
        if history and self.decoder.cfg.no_repeat:
            said = {t.text for t in history if t.is_action}
            fresh = [a for a in self.candidates if a not in said]
            return (
                fresh or self.candidates
            )  # every one said already: repeat rather than fall silent
        return self.candidates

    def prompt(self, history: Sequence[Text]) -> str:
        """The model's input for a history: ``history_to_str``, then the partner model's line when
        the checkpoint was trained with one (what its training prompts ended with)."""
        text = history_to_str(history)
        if self.partner_model is not None:
            from training.datasets.partner_conditioned import said_by_partner

            text += self.partner_model.line(said_by_partner(history))
        return text

    def act(self, history: Sequence[Text]) -> str:
        prompt = self.prompt(history)
        choices = self.choices(self._task, history)
        if choices:
            return self.decoder.choose(prompt, choices, self._gen)
        return self.decoder.sample(prompt, self._gen)

    def act_batch(
        self,
        tasks: Sequence,
        generators: Sequence[torch.Generator],
        memos: Sequence[dict] | None = None,
    ) -> tuple[list[str], list[bool]]:
        """:meth:`act` for many episodes at once (each task's own history and legal actions, each
        episode's own generator): the reranked ones in one scoring pass, the rest generated in one
        batch. ``memos``: one dict per episode, kept by the caller for the episode's length (the
        decoder's cache of its prompt lives there). Returns (actions, cut flags)."""
        histories = [t.history() for t in tasks]
        prompts = [self.prompt(h) for h in histories]
        legal = [self.choices(t, h) for t, h in zip(tasks, histories, strict=True)]
        ranked = [i for i, acts in enumerate(legal) if acts]
        free = [i for i, acts in enumerate(legal) if not acts]
        actions: list[str] = [""] * len(tasks)
        cuts = [False] * len(tasks)
        if ranked:
            chosen = self.decoder.choose_batch(
                [prompts[i] for i in ranked],
                [legal[i] for i in ranked],
                [generators[i] for i in ranked],
            )
            for i, a in zip(ranked, chosen, strict=True):
                actions[i] = a
        if free:
            states = None
            if memos is not None:
                from training.decoding.free_text import RowState

                states = [memos[i].setdefault("decode", RowState()) for i in free]
            texts, cut = self.decoder.sample_batch(
                [prompts[i] for i in free], [generators[i] for i in free], states=states
            )
            for i, a, c in zip(free, texts, cut, strict=True):
                actions[i], cuts[i] = a, c
        return actions, cuts

    def explain(self, history: Sequence[Text], legal: Sequence[str] | None = None, top: int = 5):
        """What the checkpoint thinks of the state ``history``: an
        :class:`envs.players.explanation.Explanation` (``training.agents.explain.explain``)."""
        from training.agents.explain import explain

        data = (
            None if legal else self.choices(None, history)
        )  # the data's actions (a reranking decoding)
        if data:  # the ones the agent ranks highest (all of them: thousands of rows to score)
            scores, _ = self.decoder.action_scores(self.prompt(history), data)
            best = torch.topk(scores, min(len(data), 3 * top)).indices.tolist()
            return explain(
                self,
                history,
                [data[i] for i in best],
                top=top,
                source=f"top-ranked of the data's {len(data)} actions",
            )
        return explain(self, history, legal, top=top)

    def policy_map(self, task) -> dict[tuple[int, int], str]:
        """The greedy action on every free cell of the fully observed maze ``task``
        (``training.agents.explain.policy_map``)."""
        from training.agents.explain import policy_map

        return policy_map(self, task)

    def action_distribution(self, history: Sequence[Text], actions: Sequence[str]) -> list[float]:
        """Exact probabilities of ``actions`` given ``history`` (used for exact evaluation)."""
        return self.decoder.action_distribution(self.prompt(history), actions)


def agent_device() -> torch.device:
    """Where a loaded checkpoint plays: ``$LMRL_DEVICE`` (``cpu``, ``cuda``, ``cuda:1``, ...), else
    the GPU when torch sees one. Raises TrainingError for a device that is not there."""
    from training.errors import TrainingError

    want = os.environ.get("LMRL_DEVICE", "").strip().lower()
    if want in ("", "auto"):
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(want)
    except (RuntimeError, ValueError):
        raise TrainingError(
            f"LMRL_DEVICE={want!r} is not a device: cpu, cuda, cuda:1, ... or auto"
        ) from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise TrainingError(
            f"LMRL_DEVICE={want!r}, but torch sees no GPU on this machine: use cpu or auto"
        )
    if dev.type not in ("cpu", "cuda"):
        raise TrainingError(f"LMRL_DEVICE={want!r}: checkpoints play on cpu or cuda")
    return dev


def load_agent(
    path: str | Path,
    *,
    decoding: str | None = None,
    beta: float | None = None,
    temperature: float = 1.0,
    max_new_tokens: int | None = None,
    logit_weight: float | None = None,
    top_k: int | None = None,
    no_repeat: bool | None = None,
    **_: Any,
) -> CheckpointAgent:
    """Load a checkpoint folder (or a run folder holding ``checkpoint/``) as an Agent
    (``logit_weight``: the reranker's weight of π_β's log-probability, instead of the checkpoint's;
    ``max_new_tokens``: the longest action it generates, by default its task's bound; ``top_k``:
    sample only among π_β's K most likely tokens, instead of the checkpoint's ``top_k``;
    ``no_repeat``: when reranking among the data's actions, skip the ones this episode already had,
    instead of the checkpoint's setting).

    Raises :class:`training.errors.TrainingError` for a missing or corrupt checkpoint.
    """
    from training.model.checkpoint import load_checkpoint, resolve_path
    from training.utterance.checkpoint import is_utterance_checkpoint, load_utterance_agent

    folder = resolve_path(path)
    if is_utterance_checkpoint(folder):  # it scores whole lines: no token decoding to choose
        return load_utterance_agent(folder, beta=beta, no_repeat=no_repeat)  # type: ignore[return-value]
    model, tok, cfg, meta = load_checkpoint(path)
    model.to(agent_device())
    if logit_weight is not None:
        cfg.logit_weight = float(logit_weight)
    if no_repeat is not None:
        cfg.no_repeat = bool(no_repeat)
    if max_new_tokens is None:
        max_new_tokens = action_token_limit(cfg.task)
    dec = Decoder(
        model,
        tok,
        cfg,
        decoding=decoding,
        beta=beta,
        temperature=temperature,
        max_new_tokens=max_new_tokens,
        top_k=top_k,
    )
    name = f"{cfg.algo}:{Path(meta['path']).resolve().parent.name}/{Path(meta['path']).name}"
    meta = {**meta, "task_options": dict(cfg.task_options), "side": getattr(cfg, "side", "agent")}
    given = {
        "decoding": decoding,
        "beta": beta,
        "temperature": None if temperature == 1.0 else temperature,
        "logit_weight": logit_weight,
        "top_k": top_k,
        "no_repeat": no_repeat,
        "max_new_tokens": None
        if max_new_tokens == action_token_limit(cfg.task)
        else max_new_tokens,
    }
    given = {k: v for k, v in given.items() if v is not None}
    if given:  # played with other settings than the checkpoint's: the name and meta say which
        name = f"{name} {settings_text(given)}"
        meta["settings"] = given
    return CheckpointAgent(
        dec, name, meta, _data_actions(Path(meta["path"])), _partner_model(Path(meta["path"]))
    )


def _partner_model(folder: Path) -> Any:
    """The partner model a checkpoint was trained with (None: none, or an older checkpoint)."""
    try:
        obj = json.loads((folder / "dataset.json").read_text()).get("partner_model")
    except (OSError, ValueError):
        return None
    if not obj:
        return None
    from training.datasets.partner_conditioned import PartnerModel

    return PartnerModel.from_json(obj)


def _data_actions(folder: Path) -> list[str]:
    """The training data's distinct actions kept with a checkpoint (none for older checkpoints)."""
    try:
        actions = json.loads((folder / "dataset.json").read_text()).get("actions") or []
    except (OSError, ValueError, AttributeError):
        return []
    return [a for a in actions if isinstance(a, str)]


def evaluate_model(
    model, tok, cfg, store=None, episodes: int | None = None, seed: int = 0
) -> dict[str, Any]:
    """Evaluate a model being trained (offline or online) against its task, as a checkpoint
    agent would play it (exact DP for maze-fo)."""
    from training.evaluation.evaluate import evaluate

    was = model.training
    try:
        agent = CheckpointAgent(Decoder(model, tok, cfg), f"{cfg.algo}:training", {})
        return evaluate(
            agent,
            cfg.task,
            episodes or cfg.eval_episodes,
            seed=seed,
            store=store,
            task_options=cfg.task_options,
        )
    finally:
        model.train(was)
