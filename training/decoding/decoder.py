"""Decoding: value-guided sampling with KV caches (logits = ℓ_β + β·Q, docs/algorithms.md §4.5 "Generation") and LMRL's
reranker over enumerable actions (score = Σ_tokens (min Q̄ − V) [+ w·Σ log π_β], §4.5, §13).

:class:`Decoder` works for every algorithm: BC samples π_β; MC and ILQL perturb π_β by β·Q; Q-SFT
samples p_θ directly; its reranker scores log p_θ, or with ``qsft_target = "ratio"`` the last token's
log p_θ − log π_β (an estimate of log Q; ``extra.qsft_policy = "ratio"`` sums that over the tokens).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from training.decoding.free_text import RowState, _cached_step, sample_batch
from training.decoding.kv_cache import cache_from, kv_of
from training.decoding.padding import left_pad, position_ids
from training.losses import perturb_logits
from training.model.tokenization import encode, never_sampled, newline_id


class Decoder:
    """Turns a prompt (the model's context text) into the next utterance."""

    def __init__(
        self,
        model,
        tokenizer,
        cfg,
        *,
        decoding: str | None = None,
        beta: float | None = None,
        temperature: float = 1.0,
        max_new_tokens: int = 32,
        top_k: int | None = None,
    ) -> None:
        self.model = model.eval()
        self.tok = tokenizer
        self.cfg = cfg
        self.algo = cfg.algo
        self.decoding = decoding or cfg.decoding
        self.beta = cfg.beta if beta is None else float(beta)
        self.temperature = float(temperature)
        self.top_k = int(getattr(cfg, "top_k", 0) or 0) if top_k is None else int(top_k)
        if self.top_k < 0:
            raise ValueError("top_k must be 0 (every token) or a number of tokens > 0")
        self.max_new_tokens = int(max_new_tokens)
        self.eos = newline_id(tokenizer)
        self.pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        self.banned = never_sampled(tokenizer)
        self.n_positions = int(
            getattr(model.lm.config, "n_positions", 0)
            or getattr(model.lm.config, "max_position_embeddings", 1024)
        )
        self.context = min(self.n_positions, int(getattr(cfg, "max_length", 0) or self.n_positions))
        """Longest prompt + action it reads: the training windows' ``max_length`` (positions past it
        were never trained; a longer history is cut from the left)."""
        self._cache: dict[tuple[str, tuple[str, ...]], torch.Tensor] = {}
        self._action_ids: dict[
            str, list[int]
        ] = {}  # the actions' tokens (the data's are scored every turn)
        self._scratch: list = []  # the memory the reranker's caches are built in, reused (decode_cache.cache_from)

    # -- per-token quantities -------------------------------------------------------------------
    def _heads(self, logits: torch.Tensor, h: torch.Tensor, beta_logits: torch.Tensor | None):
        """(sampling logits, π_β log-probs, per-token score matrix or None) at each position; with
        ``top_k`` the sampling logits keep only π_β's ``top_k`` most likely tokens."""
        guided, logp_beta, score = self._heads_all(logits, h, beta_logits)
        if self.top_k:
            guided = self._keep_top_k(guided, logp_beta)
        return guided, logp_beta, score

    def _keep_top_k(self, guided: torch.Tensor, logp_beta: torch.Tensor) -> torch.Tensor:
        """``guided`` with every token outside π_β's ``top_k`` most likely (never-sampled tokens
        left out of the count) set to -inf: the values re-rank what the language model would write,
        and cannot pick a token it finds unlikely (β·Q on a pretrained prior: `itoitoito…`)."""
        if self.top_k >= logp_beta.shape[-1]:
            return guided
        ranked = logp_beta
        if self.banned:
            ranked = logp_beta.clone()
            ranked[..., self.banned] = float("-inf")
        kth = ranked.topk(self.top_k, dim=-1).values[..., -1:]
        return guided.masked_fill(ranked < kth, float("-inf"))

    def _heads_all(self, logits: torch.Tensor, h: torch.Tensor, beta_logits: torch.Tensor | None):
        m = self.model
        lb = beta_logits if beta_logits is not None else logits
        logp_beta = F.log_softmax(lb.float(), dim=-1)
        if self.algo == "ilql":
            q1, q2 = m.q_values(h)
            guided = perturb_logits(lb, torch.minimum(q1, q2), self.beta)
            t1, t2 = m.q_values(h, target=True)
            score = torch.minimum(t1, t2) - m.value(h).unsqueeze(-1)
            return guided, logp_beta, score
        if self.algo == "mc":
            (q,) = m.q_values(h)
            return perturb_logits(lb, q, self.beta), logp_beta, q
        if self.algo == "qsft":
            return logits.float(), logp_beta, F.log_softmax(logits.float(), dim=-1)
        return lb.float(), logp_beta, logp_beta

    @torch.no_grad()
    def _forward(self, ids: torch.Tensor, attn: torch.Tensor, at: torch.Tensor | None = None):
        """``_heads`` of a forward: at every position, or only at positions ``at`` [B, A] (the
        heads, the log-softmaxes and the value heads then cost A positions, not the whole row)."""
        m = self.model
        out = m.forward_lm(ids, attn, hidden=True)
        logits, hidden = out.logits, out.hidden
        beta_logits = None
        if m.pi_beta_lm is not None:
            beta_logits = m.forward_lm(ids, attn, hidden=False, lm=m.pi_beta_lm).logits
        if at is not None:
            logits, hidden = _take(logits, at), _take(hidden, at)
            beta_logits = _take(beta_logits, at) if beta_logits is not None else None
        if beta_logits is None and m.beta_head is not None:
            beta_logits = m.beta_head(hidden)
        return self._heads(logits, hidden, beta_logits)

    # -- enumerable actions ---------------------------------------------------------------------
    def _rows(self, prompt: str, actions: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """(prompt tokens, action tokens) of each action, the prompt cut so both fit; an action
        longer than the context keeps its first tokens after the prompt's last one."""
        p_ids = encode(self.tok, prompt)
        seqs = []
        if len(self._action_ids) > 65536:
            self._action_ids.clear()
        for a in actions:
            ids = self._action_ids.get(a)
            if ids is None:
                ids = self._action_ids[a] = encode(self.tok, a)
            a_ids = ids[: max(self.context - 1, 1)]
            keep = self.context - len(a_ids)
            seqs.append((p_ids[-keep:] if keep > 0 else [], a_ids))
        return seqs

    @torch.no_grad()
    def _score_rows(self, seqs: Sequence[tuple[list[int], list[int]]]) -> tuple[list, list]:
        """Per (prompt, action) row: (reranker score, log-probability under the sampling policy).
        Each distinct prompt is fed once (left-padded, with position ids); its cache is then
        copied to its actions' rows, which feed only the action tokens."""
        guided, logp_beta, score = self._shared_prompt_heads(seqs)
        return self._row_scores(seqs, guided, logp_beta, score)

    @torch.no_grad()
    def _shared_prompt_heads(self, seqs):
        m = self.model
        dev = _device(m)
        prompts = list(dict.fromkeys(tuple(p) for p, _ in seqs))
        which = {p: j for j, p in enumerate(prompts)}
        ids, attn = left_pad([list(p) or [self.pad] for p in prompts], self.pad)
        plen = attn.sum(1)
        pos = position_ids(attn)
        lms = [m.lm] + ([m.pi_beta_lm] if m.pi_beta_lm is not None else [])
        row_of = torch.tensor([which[tuple(p)] for p, _ in seqs], dtype=torch.long)
        span = max(len(a) for _, a in seqs)
        tail = [a[:-1] for _, a in seqs]  # the action tokens fed after the prompt
        width = max(1, max(len(t) for t in tail))
        t_ids = torch.tensor(
            [list(t) + [self.pad] * (width - len(t)) for t in tail], dtype=torch.long
        )
        t_attn = torch.tensor(
            [[1] * len(t) + [0] * (width - len(t)) for t in tail], dtype=torch.long
        )
        t_pos = (plen[row_of].unsqueeze(1) + torch.arange(width).unsqueeze(0)).clamp(
            max=self.n_positions - 1
        )
        full_attn = torch.cat([attn[row_of], t_attn], dim=1)
        outs = []
        for k, lm in enumerate(lms):
            first, cache = _cached_step(
                lm,
                ids.to(dev),
                None,
                hidden=(k == 0),
                last_only=True,
                attention_mask=attn.to(dev),
                position_ids=pos.to(dev),
            )
            past = cache_from(kv_of(cache), width, rows=row_of.tolist(), scratch=self._scratch)
            rest, _ = _cached_step(
                lm,
                t_ids.to(dev),
                past,
                hidden=(k == 0),
                attention_mask=full_attn.to(dev),
                position_ids=t_pos.to(dev),
            )
            lg = torch.cat([first.logits[:, -1:][row_of.to(dev)], rest.logits], dim=1)[:, :span]
            h = None
            if k == 0:
                h = torch.cat(
                    [first.hidden_states[-1][:, -1:][row_of.to(dev)], rest.hidden_states[-1]], dim=1
                )[:, :span]
            outs.append((lg, h))
        logits, hidden = outs[0]
        beta_logits = (
            outs[1][0]
            if len(outs) > 1
            else (m.beta_head(hidden) if m.beta_head is not None else None)
        )
        return self._heads(logits, hidden, beta_logits)

    def _row_scores(self, seqs, guided, logp_beta, score) -> tuple[list, list]:
        """Per row: (reranker score, the action's log-probability under the sampling policy), from
        its action tokens' positions (the first ``len(action)`` of the row), for all rows at once."""
        guided, logp_beta, score = guided.cpu(), logp_beta.cpu(), score.cpu()
        logp_pol = F.log_softmax(guided / max(self.temperature, 1e-6), dim=-1)
        n = torch.tensor([len(a) for _, a in seqs])
        span = int(n.max())
        tgt = torch.tensor(
            [list(a) + [0] * (span - len(a)) for _, a in seqs], dtype=torch.long
        ).unsqueeze(-1)
        mask = torch.arange(span).unsqueeze(0) < n.unsqueeze(1)

        def taken(
            x: torch.Tensor,
        ) -> torch.Tensor:  # each position's action token, 0 past the action
            return torch.where(mask, x[:, :span].gather(-1, tgt).squeeze(-1), 0.0)

        tok_score, lb = taken(score), taken(logp_beta)
        if self.algo == "mc":
            s = tok_score.gather(1, (n - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
        elif self.algo == "qsft" and self.cfg.qsft_target == "ratio":
            last = (
                (n - 1).clamp(min=0).unsqueeze(1)
            )  # p_θ/π_β estimates Q (training/offline/qsft.py)
            s = (tok_score - lb).gather(1, last).squeeze(1)
        elif self.algo == "qsft" and self.cfg.extra.get("qsft_policy") == "ratio":
            s = tok_score.sum(1) - lb.sum(1)
        else:
            s = tok_score.sum(1)
        if self.cfg.logit_weight and self.algo in ("ilql", "mc"):
            s = s + self.cfg.logit_weight * lb.sum(1)
        return list(s), list(taken(logp_pol).sum(1))

    @torch.no_grad()
    def _score_rows_full(self, seqs: Sequence[tuple[list[int], list[int]]]) -> tuple[list, list]:
        """:meth:`_score_rows` by one right-padded forward of whole rows (no cache)."""
        width = max(len(p) + len(a) for p, a in seqs)
        ids = torch.full((len(seqs), width), self.pad, dtype=torch.long)
        attn = torch.zeros_like(ids)
        for i, (p, a) in enumerate(seqs):
            ids[i, : len(p) + len(a)] = torch.tensor(p + a)
            attn[i, : len(p) + len(a)] = 1
        dev = _device(self.model)
        span = max(len(a) for _, a in seqs)  # the positions that predict an action's tokens
        at = torch.zeros((len(seqs), span), dtype=torch.long)
        for i, (p, a) in enumerate(seqs):
            at[i, : len(a)] = torch.arange(len(p) - 1, len(p) + len(a) - 1).clamp(min=0)
        guided, logp_beta, score = self._forward(ids.to(dev), attn.to(dev), at.to(dev))
        return self._row_scores(seqs, guided, logp_beta, score)

    def _remember(self, key, out) -> None:
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[key] = out

    @torch.no_grad()
    def action_scores(
        self, prompt: str, actions: Sequence[str]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(reranker score, exact log-probability under the sampling policy) of each action."""
        return self.action_scores_batch([prompt], [actions])[0]

    @torch.no_grad()
    def action_scores_batch(
        self, prompts: Sequence[str], action_lists: Sequence[Sequence[str]], max_tokens: int = 4096
    ) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """:meth:`action_scores` of many prompts, their (prompt, action) rows in few forwards of at
        most about ``max_tokens`` tokens (one prompt's rows are never split)."""
        keys = [(p, tuple(a)) for p, a in zip(prompts, action_lists, strict=True)]
        found = {k: self._cache[k] for k in dict.fromkeys(keys) if k in self._cache}
        todo = [k for k in dict.fromkeys(keys) if k not in found]
        chunk: list = []
        for n, key in enumerate(todo):
            chunk.append((key, self._rows(*key)))
            tokens = sum(len(p) + len(a) for _, rs in chunk for p, a in rs)
            if tokens >= max_tokens or n == len(todo) - 1:
                scores, logps = self._score_rows([r for _, rs in chunk for r in rs])
                at = 0
                for k, rs in chunk:
                    found[k] = (
                        torch.stack(scores[at : at + len(rs)]).float(),
                        torch.stack(logps[at : at + len(rs)]).float(),
                    )
                    self._remember(k, found[k])
                    at += len(rs)
                chunk = []
        return [found[k] for k in keys]

    def action_distribution(self, prompt: str, actions: Sequence[str]) -> list[float]:
        """Probability of each action under this decoder (the rest is invalid text when sampling)."""
        return self._distribution(*self.action_scores(prompt, actions))

    def _distribution(self, scores: torch.Tensor, logps: torch.Tensor) -> list[float]:
        if self.decoding in ("rerank", "greedy"):
            src = scores if self.decoding == "rerank" else logps
            probs = torch.zeros_like(src)
            probs[int(torch.argmax(src))] = 1.0
            return probs.tolist()
        if self.decoding == "rerank_sample":
            return torch.softmax(scores / max(self.temperature, 1e-6), dim=0).tolist()
        return logps.exp().tolist()

    def choose(self, prompt: str, actions: Sequence[str], generator: torch.Generator) -> str:
        if self.decoding in ("rerank", "greedy", "rerank_sample"):
            return self.choose_batch([prompt], [actions], [generator])[0]
        return self.sample(prompt, generator)

    def choose_batch(
        self,
        prompts: Sequence[str],
        action_lists: Sequence[Sequence[str]],
        generators: Sequence[torch.Generator],
    ) -> list[str]:
        """:meth:`choose` for many prompts: their actions scored together, each drawn with its own
        generator (so a choice does not depend on the batch it was made in)."""
        if self.decoding not in ("rerank", "greedy", "rerank_sample"):
            return self.sample_batch(prompts, generators)[0]
        out = []
        scored = self.action_scores_batch(prompts, action_lists)
        for actions, (sc, lp), g in zip(action_lists, scored, generators, strict=True):
            probs = torch.tensor(self._distribution(sc, lp))
            out.append(actions[int(torch.multinomial(probs, 1, generator=g))])
        return out

    # -- free-text generation -------------------------------------------------------------------
    def sample_batch(
        self,
        prompts: Sequence[str],
        generators: Sequence[torch.Generator],
        greedy: bool | None = None,
        states: Sequence[RowState | None] | None = None,
    ) -> tuple[list[str], list[bool]]:
        """:meth:`sample` of many prompts in one batch: (utterances, cut flags); ``states`` keep
        each episode's cache between turns (:mod:`training.decoding.free_text`)."""
        return sample_batch(self, prompts, generators, greedy, states)

    @torch.no_grad()
    def sample(self, prompt: str, generator: torch.Generator, greedy: bool | None = None) -> str:
        """Token-by-token decoding with KV caches for the trunk and (if frozen) π_β."""
        greedy = self.decoding == "greedy" if greedy is None else greedy
        m = self.model
        keep = max(self.context - self.max_new_tokens, 1)
        dev = _device(m)
        ids = torch.tensor(
            [encode(self.tok, prompt)[-keep:] or [self.pad]], dtype=torch.long, device=dev
        )
        lms = [m.lm] + ([m.pi_beta_lm] if m.pi_beta_lm is not None else [])
        pasts: list = [None] * len(lms)
        out_ids: list[int] = []
        step_ids = ids
        for _ in range(self.max_new_tokens):
            outs = []
            for k, lm in enumerate(lms):
                o, pasts[k] = _cached_step(lm, step_ids, pasts[k], hidden=(k == 0))
                outs.append(o)
            logits = outs[0].logits[:, -1:]
            h = outs[0].hidden_states[-1][:, -1:]
            beta_logits = (
                outs[1].logits[:, -1:]
                if len(outs) > 1
                else (m.beta_head(h) if m.beta_head is not None else None)
            )
            guided, _, _ = self._heads(logits, h, beta_logits)
            z = (guided[0, -1] / max(self.temperature, 1e-6)).cpu()  # the generator is a CPU one
            if self.banned:
                z[self.banned] = float("-inf")
            if greedy:
                nxt = int(torch.argmax(z))
            else:
                nxt = int(torch.multinomial(torch.softmax(z, dim=-1), 1, generator=generator))
            out_ids.append(nxt)
            if nxt == self.eos:
                break
            step_ids = torch.tensor([[nxt]], dtype=torch.long, device=dev)
        text = self.tok.decode(out_ids, skip_special_tokens=False)
        return text.removesuffix("\n") + "\n"


def _take(x: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
    """``x[b, at[b, j]]`` for every row b: [B, T, ...] -> [B, A, ...]."""
    idx = at.view(*at.shape, *([1] * (x.dim() - 2))).expand(*at.shape, *x.shape[2:])
    return x.gather(1, idx)


def _device(model) -> torch.device:
    return next(model.parameters()).device
