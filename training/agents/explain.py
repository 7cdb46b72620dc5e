"""What a checkpoint thinks of a state: its top candidate actions with their values or probabilities.

For the watch overlay of the app (computed in a worker, never on the event loop) and for tests.
The candidates are the task's legal actions when it has them, else a few utterances sampled from
the checkpoint (deduplicated, the greedy one first). Each candidate is scored in one right-padded
forward of ``prompt + action`` and the per-token quantities at the positions that predict the
action's tokens ``a_1..a_k`` are combined per algorithm:

* ILQL: ``V`` is the value head at the state (the position predicting ``a_1``); the advantage is the
  reranker's ``A = Σ_t (min Q̄_t − V_t)`` (docs/algorithms.md §4.5) and ``Q = V + A`` (for a
  one-token action exactly ``min Q̄(s, a)``).
* MC: ``Q`` is the Q head at the action's last token (what the reranker scores); MC's Q is the
  behaviour policy's, so ``V = Σ_a π_β(a|s)·Q(s, a)`` over the candidates (π_β renormalised over
  them) and ``A = Q − V``.
* Q-SFT: ``Q = p_θ(a|s)`` (the product of the action's token probabilities, Q-SFT's conservative
  Q-value); ``V = max_a Q`` over the candidates and ``A = Q − V``.
* Policy checkpoints (BC, %BC, PPO's policy): no values; each candidate's probability under the
  checkpoint's sampling policy, renormalised over the candidates.

The result is plain data (:mod:`envs.players.explanation`, no torch), so the app can draw it and an
agent in its own process can send it. ``rl_choice`` is the action the agent's decoder would play (its own scoring, including any
``logit_weight``); ``bc_choice`` is the one π_β (the BC head, or the frozen copy) ranks first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from envs.core import Text, history_to_str
from envs.players.explanation import ARROWS, Candidate, Explanation

VALUE_ALGOS = ("ilql", "mc", "qsft")
__all__ = [
    "ARROWS",
    "VALUE_ALGOS",
    "Candidate",
    "Explanation",
    "explain",
    "policy_map",
    "token_terms",
]


@torch.no_grad()
def token_terms(decoder, prompt: str, actions: Sequence[str]) -> list[dict[str, torch.Tensor]]:
    """Per action: its per-token ``logp`` (the LM head), ``logp_beta`` (π_β), and for value heads
    ``q`` (min of the target Q heads for ILQL, the Q head for MC) and ``v`` (ILQL's value head), at
    the positions that predict the action's tokens. One right-padded forward of all the rows."""
    m = decoder.model
    seqs = decoder._rows(prompt, actions)  # the prompt cut from the left as the reranker does
    width = max(len(p) + len(a) for p, a in seqs)
    ids = torch.full((len(seqs), width), decoder.pad, dtype=torch.long)
    attn = torch.zeros_like(ids)
    for i, (p, a) in enumerate(seqs):
        ids[i, : len(p) + len(a)] = torch.tensor(p + a)
        attn[i, : len(p) + len(a)] = 1
    dev = next(m.parameters()).device
    ids, attn = ids.to(dev), attn.to(dev)
    out = m.forward_lm(ids, attn, hidden=True)
    beta_all = None
    if m.pi_beta_lm is not None:
        beta_all = m.forward_lm(ids, attn, hidden=False, lm=m.pi_beta_lm).logits
    rows = []
    for i, (p, a) in enumerate(seqs):
        pos = torch.arange(len(p) - 1, len(p) + len(a) - 1, device=dev).clamp(min=0)
        tgt = torch.tensor(a, dtype=torch.long, device=dev)
        h = out.hidden[i, pos]
        logits = out.logits[i, pos].float()
        if beta_all is not None:
            beta = beta_all[i, pos].float()
        elif m.beta_head is not None:
            beta = m.beta_head(h).float()
        else:
            beta = logits
        row = {
            "logp": F.log_softmax(logits, -1).gather(-1, tgt[:, None])[:, 0].cpu(),
            "logp_beta": F.log_softmax(beta, -1).gather(-1, tgt[:, None])[:, 0].cpu(),
        }
        if m.algo == "ilql":
            t1, t2 = m.q_gathered(h, tgt, target=True)
            row["q"] = torch.minimum(t1, t2).float().cpu()
            row["v"] = m.value(h).float().cpu()
        elif m.algo == "mc":
            (q,) = m.q_gathered(h, tgt)
            row["q"] = q.float().cpu()
        rows.append(row)
    return rows


def _prompt(agent, history: Sequence[Text]) -> str:
    """The agent's own input for ``history`` (a partner-conditioned checkpoint adds its line)."""
    prompt = getattr(agent, "prompt", None)
    return prompt(history) if callable(prompt) else history_to_str(history)


def candidate_actions(
    agent, history: Sequence[Text], legal: Sequence[str] | None, samples: int = 6
) -> tuple[list[str], str]:
    """(candidates, where from): the legal actions, else up to ``samples`` distinct utterances
    sampled from the checkpoint with a fixed generator (the greedy one first)."""
    if legal:
        return list(dict.fromkeys(legal)), "legal actions"
    dec = agent.decoder
    prompt = _prompt(agent, history)
    gen = torch.Generator().manual_seed(0)
    found = [dec.sample(prompt, gen, greedy=True)]
    for _ in range(samples - 1):
        found.append(dec.sample(prompt, gen, greedy=False))
    return list(dict.fromkeys(found)), "samples"


def _softmax(xs: Sequence[float]) -> list[float]:
    top = max(xs)
    ex = [math.exp(x - top) for x in xs]
    total = sum(ex)
    return [e / total for e in ex]


def explain(
    agent,
    history: Sequence[Text],
    legal: Sequence[str] | None = None,
    top: int = 5,
    source: str | None = None,
) -> Explanation:
    """The top ``top`` candidates of the state ``history`` for a checkpoint agent
    (:class:`training.agents.checkpoint_agent.CheckpointAgent`); see the module docstring for what is computed.
    ``source``: where ``legal`` came from, in words (default: ``legal actions``)."""
    dec = agent.decoder
    algo = dec.algo
    prompt = _prompt(agent, history)
    actions, found = candidate_actions(agent, history, legal)
    source = source or found
    terms = token_terms(dec, prompt, actions)
    scores, logps = dec.action_scores(prompt, actions)
    # What the agent plays (its most likely play when it samples); in log space: the sampled
    # utterances of a barely trained model have probabilities that underflow.
    by = scores if dec.decoding in ("rerank", "rerank_sample") else logps
    rl_choice = actions[int(torch.argmax(by))]
    policy = _softmax([float(x) for x in logps])
    beta_prob = _softmax([float(t["logp_beta"].sum()) for t in terms])
    bc_choice = actions[max(range(len(actions)), key=lambda i: beta_prob[i])]
    qs: list[float | None] = [None] * len(actions)
    vs: list[float | None] = [None] * len(actions)
    state_value = None
    if algo == "ilql":
        state_value = float(terms[0]["v"][0])
        for i, t in enumerate(terms):
            adv = float((t["q"] - t["v"]).sum())
            vs[i], qs[i] = state_value, state_value + adv
    elif algo == "mc":
        q_last = [float(t["q"][-1]) for t in terms]
        state_value = sum(p * q for p, q in zip(beta_prob, q_last, strict=True))
        qs, vs = list(q_last), [state_value] * len(actions)
    elif algo == "qsft":
        if dec.cfg.qsft_target == "ratio":  # p_θ/π_β at the last token estimates Q
            p_theta = [math.exp(float(t["logp"][-1] - t["logp_beta"][-1])) for t in terms]
        else:
            p_theta = [math.exp(float(t["logp"].sum())) for t in terms]
        state_value = max(p_theta)
        qs, vs = list(p_theta), [state_value] * len(actions)
    kind = "value" if algo in VALUE_ALGOS else "policy"
    cands = [
        Candidate(
            a,
            qs[i],
            vs[i],
            None if qs[i] is None else qs[i] - vs[i],
            float(policy[i]),
            beta_prob[i],
        )
        for i, a in enumerate(actions)
    ]
    key = (lambda c: c.advantage) if kind == "value" else (lambda c: c.prob)
    ranked = sorted(cands, key=key, reverse=True)
    shown = ranked[:top]
    for must in (rl_choice, bc_choice):  # the two choices are always shown
        if all(c.action != must for c in shown):
            shown.append(next(c for c in ranked if c.action == must))
    return Explanation(algo, kind, shown, rl_choice, bc_choice, state_value, source, len(actions))


@torch.no_grad()
def policy_map(agent, task) -> dict[tuple[int, int], str]:
    """The agent's greedy action on every free cell of a fully observed maze (its observation is
    the whole state, so each cell is one prompt): ``{(row, col): action}``, all scored in one
    batch. ``task`` is the maze being watched; a fresh copy of it is reset on each cell."""
    import envs

    if getattr(task.spec, "window", None) != "step" or not hasattr(task, "tables"):
        raise ValueError("a policy map needs a fully observed maze")
    probe = envs.make(
        task.spec.id, **{k: v for k, v in dict(task.spec.options or {}).items() if k != "partner"}
    )
    cells, prompts = [], []
    for cell in probe.tables.starts:
        rc = tuple(probe.tables.cells[cell])
        probe.reset(0, options={"init_position": rc})
        cells.append(rc)
        prompts.append(history_to_str(probe.history()))
    legal = probe.legal_actions()
    dec = agent.decoder
    scored = dec.action_scores_batch(prompts, [legal] * len(prompts))
    rerank = dec.decoding in ("rerank", "rerank_sample")
    return {
        rc: legal[int(torch.argmax(sc if rerank else lp))]
        for rc, (sc, lp) in zip(cells, scored, strict=True)
    }
