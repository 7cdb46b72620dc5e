"""Models: a causal LM (``tiny`` GPT-2 from a config, or any local Hugging Face causal LM) plus the
value heads of MC / ILQL, target copies, and π_β (docs/algorithms.md §3, §4, §10).

``pi_beta="shared"`` trains the LM head with a BC term on the same trunk (one forward gives π_β's
logits and the values); ``"frozen"`` keeps a frozen copy of the initial LM (LMRL parity when the run
starts from a BC checkpoint). ``target="heads_only"`` keeps polyak copies of the heads evaluated on
detached online hidden states (trlx); ``"full"`` also keeps a target trunk (LMRL-Gym).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from transformers import AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel, PreTrainedModel
from transformers.utils import logging as hf_logging

from training.errors import TrainingError

# transformers draws progress bars on stderr when it loads or writes weights: they garble the
# app's screen and our own progress output.
hf_logging.disable_progress_bar()


class MLPHead(nn.Module):
    """d -> d -> out with ReLU (or GELU); the last layer starts at W = 0, b = ``bias`` (LMRL
    ``MLPHead``). With ReLU a head whose units all went negative gives the same value to every
    input and can never learn again (no gradient passes); with ``act="gelu"`` a unit below zero
    still passes gradient."""

    def __init__(self, d: int, out: int, bias: float = 0.0, act: str = "relu") -> None:
        super().__init__()
        self.fc1 = nn.Linear(d, d)
        self.fc2 = nn.Linear(d, out)
        nn.init.zeros_(self.fc2.weight)
        nn.init.constant_(self.fc2.bias, bias)
        self.act = torch.nn.functional.gelu if act == "gelu" else torch.relu

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(h)))

    def gathered(self, h: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        """``forward(h).gather(-1, idx[..., None])[..., 0]`` without the full output row."""
        z = self.act(self.fc1(h))
        return (z * self.fc2.weight[idx]).sum(-1) + self.fc2.bias[idx]


def tiny_lm(
    vocab_size: int,
    n_positions: int,
    n_layer: int = 2,
    n_embd: int = 128,
    n_head: int = 4,
    dropout: float = 0.0,
    pad_id: int = 0,
    eos_id: int = 1,
) -> GPT2LMHeadModel:
    """A small GPT-2 trained from scratch (no download)."""
    cfg = GPT2Config(
        vocab_size=vocab_size,
        n_positions=n_positions,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        resid_pdrop=dropout,
        embd_pdrop=dropout,
        attn_pdrop=dropout,
        pad_token_id=pad_id,
        bos_token_id=eos_id,
        eos_token_id=eos_id,
    )
    return GPT2LMHeadModel(cfg)


def load_lm(path: str) -> PreTrainedModel:
    """A causal LM from a local folder (or the local hub cache); never downloads or unpickles."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # its warnings and load report would come before our one line
    try:
        model = AutoModelForCausalLM.from_pretrained(
            str(path), local_files_only=True, use_safetensors=True
        )
    except Exception as e:  # noqa: BLE001 - transformers/safetensors raise many error types
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TrainingError(
            f"{path} is not a loadable causal language model ({first[:160]})"
        ) from None
    finally:
        hf_logging.set_verbosity(verbosity)
    if not hasattr(model, "get_output_embeddings") or model.get_output_embeddings() is None:
        raise TrainingError(f"{path} is not a causal language model (no output head)")
    return model


def train_top_layers(lm: PreTrainedModel, top: int | None) -> None:
    """Freeze ``lm`` except its last ``top`` transformer blocks and its final norm (None: leave it
    all trainable). The backward pass then stops at the lowest trained block: on a 30-block
    SmolLM2 a step costs about one forward and a fraction of a backward."""
    if top is None:
        return
    base = lm.base_model
    found = [getattr(base, n, None) for n in ("layers", "h", "blocks")]
    blocks = next((b for b in found if isinstance(b, nn.ModuleList)), None)
    if blocks is None:
        raise TrainingError(
            f"--train-layers: cannot find the transformer blocks of {type(lm).__name__}"
        )
    if not 0 <= int(top) <= len(blocks):
        raise TrainingError(f"--train-layers must be between 0 and {len(blocks)} for this model")
    lm.requires_grad_(False)
    for block in list(blocks)[len(blocks) - int(top) :]:
        block.requires_grad_(True)
    for name in ("norm", "ln_f", "final_layer_norm"):
        if isinstance(getattr(base, name, None), nn.Module):
            getattr(base, name).requires_grad_(True)


def hidden_size(lm: PreTrainedModel) -> int:
    cfg = lm.config
    for name in ("hidden_size", "n_embd", "d_model"):
        if getattr(cfg, name, None):
            return int(getattr(cfg, name))
    return int(lm.get_output_embeddings().weight.shape[1])


@dataclass
class Outputs:
    logits: torch.Tensor  # [B, T, V] policy logits (π_β when shared, p_θ for Q-SFT)
    hidden: torch.Tensor | None  # [B, T, d]


class PolicyValueModel(nn.Module):
    """The LM plus whatever the algorithm needs: ``q_heads`` (1 or 2), ``v_head``, ``beta_head``
    (Q-SFT's π_β on the shared trunk), and their target copies."""

    def __init__(
        self,
        lm: PreTrainedModel,
        algo: str,
        *,
        target: str = "heads_only",
        pi_beta: str = "shared",
        head_bias: float | None = 0.0,
        head_act: str = "relu",
    ) -> None:
        super().__init__()
        self.lm = lm
        self.algo = algo
        self.target_mode = target
        self.pi_beta_mode = pi_beta
        d = hidden_size(lm)
        head_bias = 0.0 if head_bias is None else float(head_bias)
        vocab = lm.get_output_embeddings().weight.shape[0]
        self.vocab = int(vocab)
        self.q_heads = nn.ModuleList()
        self.v_head: MLPHead | None = None
        self.beta_head: nn.Linear | None = None
        if algo == "mc":
            self.q_heads.append(MLPHead(d, vocab, head_bias, head_act))
        elif algo == "ilql":
            self.q_heads.extend(
                [MLPHead(d, vocab, head_bias, head_act), MLPHead(d, vocab, head_bias, head_act)]
            )
            self.v_head = MLPHead(d, 1, head_bias, head_act)
        elif algo == "qsft" and pi_beta == "shared":
            self.beta_head = nn.Linear(d, vocab, bias=False)
            with torch.no_grad():
                self.beta_head.weight.copy_(lm.get_output_embeddings().weight)
        # frozen / target copies are not trained (requires_grad False)
        self.target_q_heads = _frozen(self.q_heads) if algo == "ilql" else None
        self.target_lm_head = None
        if algo == "qsft":
            head = lm.get_output_embeddings()
            self.target_lm_head = _frozen(nn.Linear(d, vocab, bias=head.bias is not None))
            with torch.no_grad():
                self.target_lm_head.weight.copy_(head.weight)
                if head.bias is not None:
                    self.target_lm_head.bias.copy_(head.bias)
        self.target_lm = _frozen(lm) if (target == "full" and algo in ("ilql", "qsft")) else None
        self.pi_beta_lm = (
            _frozen(lm) if pi_beta == "frozen" and algo != "bc" and algo != "pbc" else None
        )

    @torch.no_grad()
    def init_head_bias(self, value: float) -> None:
        """Start every Q/V head (and its target) at ``value`` (e.g. the data's mean return)."""
        heads = list(self.q_heads) + ([self.v_head] if self.v_head is not None else [])
        heads += list(self.target_q_heads) if self.target_q_heads is not None else []
        for h in heads:
            h.fc2.bias.fill_(value)

    # -- forward ---------------------------------------------------------------------------
    def forward_lm(
        self, input_ids, attention_mask, hidden: bool = True, lm=None, packed=None
    ) -> Outputs:
        """The LM's logits (and last hidden states); ``packed``: (position ids, segments) of a
        packed batch (:mod:`training.datasets.packing`), attention kept inside each window."""
        lm = lm if lm is not None else self.lm
        out = lm(
            input_ids=input_ids,
            output_hidden_states=hidden,
            use_cache=False,
            **_mask_args(lm, attention_mask, packed),
        )
        return Outputs(out.logits, out.hidden_states[-1] if hidden else None)

    def forward_batch(self, batch, hidden: bool = True, lm=None) -> Outputs:
        """:meth:`forward_lm` of a training batch, packed or not."""
        return self.forward_lm(
            batch["input_ids"], batch["attention_mask"], hidden, lm, packed_inputs(batch)
        )

    def hidden_batch(self, batch, lm=None) -> torch.Tensor:
        """:meth:`hidden_only` of a training batch, packed or not."""
        return self.hidden_only(
            batch["input_ids"], batch["attention_mask"], lm, packed_inputs(batch)
        )

    def hidden_only(self, input_ids, attention_mask, lm=None, packed=None) -> torch.Tensor:
        """Last hidden states without the vocabulary projection (cheap bootstrap forwards)."""
        lm = lm if lm is not None else self.lm
        base = getattr(lm, "base_model", None)
        if base is not None and base is not lm:
            return base(
                input_ids=input_ids, **_mask_args(lm, attention_mask, packed)
            ).last_hidden_state
        return self.forward_lm(input_ids, attention_mask, True, lm, packed).hidden

    def q_values(self, h: torch.Tensor, target: bool = False) -> list[torch.Tensor]:
        heads = (
            self.target_q_heads if (target and self.target_q_heads is not None) else self.q_heads
        )
        return [head(h) for head in heads]

    def q_gathered(
        self, h: torch.Tensor, idx: torch.Tensor, target: bool = False
    ) -> list[torch.Tensor]:
        heads = (
            self.target_q_heads if (target and self.target_q_heads is not None) else self.q_heads
        )
        return [head.gathered(h, idx) for head in heads]

    def value(self, h: torch.Tensor) -> torch.Tensor:
        assert self.v_head is not None
        return self.v_head(h).squeeze(-1)

    def beta_logits(self, logits: torch.Tensor, h: torch.Tensor | None) -> torch.Tensor:
        """π_β's logits for Q-SFT when shared (its own head on the trunk)."""
        assert self.beta_head is not None and h is not None
        return self.beta_head(h)

    @torch.no_grad()
    def update_targets(self, alpha: float) -> None:
        from training.losses import polyak_

        if self.target_q_heads is not None:
            polyak_(self.target_q_heads, self.q_heads, alpha)
        if self.target_lm_head is not None:
            head = self.lm.get_output_embeddings()
            polyak_(self.target_lm_head, head, alpha)
        if self.target_lm is not None:
            polyak_(self.target_lm, self.lm, alpha)

    def extra_state(self) -> dict[str, torch.Tensor]:
        """Everything except ``lm`` (saved beside the HF folder as heads.safetensors)."""
        return {
            k: v.detach().contiguous()
            for k, v in self.state_dict().items()
            if not k.startswith("lm.")
        }


def packed_inputs(batch, prefix: str = "") -> tuple[torch.Tensor, torch.Tensor] | None:
    """(position ids, segments) of a packed batch's ``prefix`` inputs (``next_``: the next-window
    prompts), or None for an unpacked one."""
    seg = batch.get(prefix + "segments")
    return None if seg is None else (batch[prefix + "position_ids"], seg)


def block_causal_mask(segments: torch.Tensor) -> torch.Tensor:
    """[R, 1, W, W] booleans of a packed batch: a token sees the tokens of its own window up to
    itself (``segments``: 1 + the window's index, 0 at padding); a padding position sees itself
    only, so that no attention row is empty (its output stays finite and is never read)."""
    w = segments.shape[1]
    t = torch.arange(w, device=segments.device)
    same = segments.unsqueeze(2) == segments.unsqueeze(1)
    allowed = same & (t.view(1, 1, w) <= t.view(1, w, 1)) & (segments != 0).unsqueeze(1)
    return (allowed | torch.eye(w, dtype=torch.bool, device=segments.device)).unsqueeze(1)


def _mask_args(lm, attention_mask, packed) -> dict[str, torch.Tensor]:
    """The attention arguments of an HF causal LM: the padding mask, or for a packed batch a
    block-diagonal causal 4-D mask (booleans for SDPA, additive for eager attention) and the
    per-window position ids."""
    if packed is None:
        return {"attention_mask": attention_mask}
    position_ids, segments = packed
    mask = block_causal_mask(segments)
    impl = getattr(lm.config, "_attn_implementation", "sdpa") or "eager"
    if impl == "eager":
        dtype = next(lm.parameters()).dtype
        mask = torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
            ~mask, torch.finfo(dtype).min
        )
    elif impl != "sdpa":
        raise TrainingError(f"--pack needs sdpa or eager attention, not {impl}")
    return {"attention_mask": mask, "position_ids": position_ids}


def _frozen(module: nn.Module) -> nn.Module:
    c = copy.deepcopy(module)
    c.requires_grad_(False)
    c.eval()
    return c


class LossModule(nn.Module):
    """``LossModule(model, loss)(batch, cfg) -> (loss, stats)``: an algorithm's
    ``loss(model, batch, cfg)`` (:func:`training.offline.loss_fn`) as a module's forward (the
    model has none). The training loop hands this wrapper to ``accelerate.prepare``: DDP
    synchronises gradients only for what runs through its wrapped module's forward."""

    def __init__(
        self, model: PolicyValueModel, loss: Callable[..., tuple[torch.Tensor, dict[str, float]]]
    ) -> None:
        super().__init__()
        self.model = model
        self.loss = loss

    def forward(self, batch: dict[str, torch.Tensor], cfg) -> tuple[torch.Tensor, dict[str, float]]:
        return self.loss(self.model, batch, cfg)
