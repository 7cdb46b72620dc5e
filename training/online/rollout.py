"""Batched rollouts for the online algorithms (docs/algorithms.md §5.2 step 1, §6 step 1).

Many task instances run side by side; at every turn the prompts of all unfinished episodes go to
the policy in one left-padded batch (:class:`BatchSampler`, KV-cached ``generate``). Task
instances come from a :class:`TaskPool` that lives for the whole run, so tasks that hold partner
processes (Stockfish) are started once and closed at the end. Every episode becomes an
:class:`data.EpisodeRecord` with source ``agent`` and the run id (:func:`to_records`), so online
data is offline data too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

import envs
from envs.core import Transition, history_to_str
from training.decoding.padding import left_pad
from training.evaluation.play_many import RolloutEpisode, TaskPool, play
from training.model.tokenization import encode, never_sampled, newline_id

__all__ = ["BatchSampler", "RolloutEpisode", "TaskPool", "from_store", "rollout", "to_records"]


class BatchSampler:
    """Samples one utterance per prompt, a batch at a time (temperature sampling, EOS = ``"\\n"``)."""

    def __init__(
        self,
        lm,
        tokenizer,
        *,
        max_new_tokens: int = 16,
        temperature: float = 1.0,
        max_prompt_tokens: int | None = None,
    ) -> None:
        self.lm = lm
        self.tok = tokenizer
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = float(temperature)
        self.eos = newline_id(tokenizer)
        self.pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.banned = never_sampled(tokenizer)
        n_pos = int(
            getattr(lm.config, "n_positions", 0)
            or getattr(lm.config, "max_position_embeddings", 1024)
        )
        limit = n_pos - self.max_new_tokens
        self.max_prompt = min(limit, max_prompt_tokens) if max_prompt_tokens else limit

    @torch.no_grad()
    def generate(self, prompts: Sequence[str]) -> list[str]:
        """The utterances (each ending in one ``"\\n"``), using the global torch RNG."""
        if not prompts:
            return []
        rows = [encode(self.tok, p)[-self.max_prompt :] or [self.pad] for p in prompts]
        ids, attn = left_pad(rows, self.pad)
        width = ids.shape[1]
        dev = next(self.lm.parameters()).device
        was = self.lm.training
        self.lm.eval()
        try:
            out = self.lm.generate(
                input_ids=ids.to(dev),
                attention_mask=attn.to(dev),
                do_sample=True,
                temperature=self.temperature,
                top_k=0,
                top_p=1.0,
                max_new_tokens=self.max_new_tokens,
                eos_token_id=self.eos,
                pad_token_id=self.pad,
                **({"suppress_tokens": self.banned} if self.banned else {}),
            )
        finally:
            self.lm.train(was)
        texts, self.last_cut = [], []
        for row in out[:, width:].tolist():
            if self.eos in row:
                row = row[: row.index(self.eos) + 1]
            text = self.tok.decode(row, skip_special_tokens=False)
            self.last_cut.append("\n" not in text)
            texts.append(text)
        return [t.split("\n", 1)[0] + "\n" for t in texts]


def rollout(
    pool: TaskPool, sampler: BatchSampler, seeds: Sequence[int], *, max_steps: int | None = None
) -> list[RolloutEpisode]:
    """Play one episode per seed, ``len(pool)`` at a time, generating each turn in one batch
    (:func:`training.evaluation.play_many.play` in chunks: the order the global RNG is drawn in)."""

    def act(_idx: list[int], tasks: list) -> tuple[list[str], list[bool]]:
        actions = sampler.generate([history_to_str(t.history()) for t in tasks])
        return actions, getattr(sampler, "last_cut", None) or [False] * len(actions)

    return play(pool.tasks, pool.task_id, seeds, act, refill=False, max_steps=max_steps)


def to_records(
    episodes: Sequence[RolloutEpisode],
    agent_name: str,
    run_id: int | None,
    options: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> list:
    """Store records (source ``agent``, agent kind ``checkpoint``) of rollout episodes."""
    from data.records import Who, episode_record, partner_identity
    from envs.players.agents import episode_source

    agent = Who("checkpoint", agent_name)
    source = episode_source(agent.kind)
    recs = []
    for ep in episodes:
        spec = envs.spec(ep.task_id)
        recs.append(
            episode_record(
                ep.task_id,
                spec.version,
                ep.seed,
                ep.first_observation,
                ep.transitions,
                agent,
                partner=partner_identity(None, spec),
                source=source,
                options=options or None,
                run_id=run_id,
                success=ep.success,
                meta=meta,
            )
        )
    return recs


def from_store(store, run_id: int, max_round: int | None = None) -> list[RolloutEpisode]:
    """The rollout episodes a run wrote in rounds ``<= max_round`` (``--resume`` of accumulating
    online %BC)."""
    from data.datasets import load_episodes
    from data.runs import run_episode_ids

    ids = run_episode_ids(store, run_id, max_round)
    out = []
    for ep in load_episodes(store, ids):
        row = ep.episode
        trs = [
            Transition(
                s["action"],
                s["observation"],
                float(s["reward"]),
                bool(s["terminated"]),
                bool(s["truncated"]),
                {},
            )
            for s in ep.steps
            if s.get("role", "agent") == "agent"
        ]
        out.append(
            RolloutEpisode(
                row["task"],
                int(row["seed"] or 0),
                row["first_observation"],
                trs,
                bool(row.get("success")),
            )
        )
    return out
