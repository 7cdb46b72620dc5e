"""Before the offline loop trains: select and window the episodes, tokenise them, and build (or
restore) the model (:func:`prepare`; :func:`build_model` for ``cfg.model``)."""

from __future__ import annotations

import json
import math
import random
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from data.composition import composition
from data.datasets import DatasetQuery
from training.config import TrainConfig
from training.datasets.partner_conditioned import PartnerModel
from training.datasets.source import (
    dataset_actions,
    fit_partner_model,
    load_windows,
    segment_texts,
    select_ids,
)
from training.datasets.windows import PackedDataset
from training.errors import TrainingError
from training.model.checkpoint import load_checkpoint
from training.model.policy_value import (
    PolicyValueModel,
    load_lm,
    tiny_lm,
    train_top_layers,
)


@dataclass
class Prepared:
    model: PolicyValueModel
    tokenizer: Any
    dataset: PackedDataset
    episode_ids: list[int]
    query: DatasetQuery
    composition: dict[str, Any]
    """What the episodes are (:func:`data.composition.composition`), saved with the run."""
    actions: list[str] = field(default_factory=list)
    """The data's distinct actions, most frequent first (:func:`dataset_actions`)."""
    partner_model: PartnerModel | None = None
    """``--partner-model``: the model its prompts are conditioned on (kept in ``dataset.json``)."""


def _set_seed(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def build_model(cfg: TrainConfig, windows, init: str | None = None, tokenizer=None):
    """(lm, tokenizer) for ``cfg.model``: ``tiny`` from scratch (its BPE learnt from ``windows``
    unless ``tokenizer`` is given), an lmrl checkpoint, or an HF LM."""
    from training.model.checkpoint import is_checkpoint
    from training.model.pretrained import resolve
    from training.model.tokenization import build_tokenizer, ensure_pad, load_tokenizer

    src = resolve(init or cfg.model)  # a prior's name (smollm2-135m) -> its converted folder
    if src == "tiny":
        tok = tokenizer or build_tokenizer(segment_texts(windows), cfg.vocab_size, cfg.tokenizer)
        lm = tiny_lm(
            len(tok),
            _positions(cfg),
            cfg.n_layer,
            cfg.n_embd,
            cfg.n_head,
            cfg.dropout,
            tok.pad_token_id,
            tok.eos_token_id,
        )
        return lm, tok
    if is_checkpoint(src):  # e.g. ILQL initialised from a BC checkpoint
        model, tok, _, _ = load_checkpoint(src, for_training=True)
        return model.lm, tok
    lm = load_lm(src)
    tok = load_tokenizer(src)
    if ensure_pad(tok):
        lm.resize_token_embeddings(len(tok))
    return lm, tok


def _positions(cfg: TrainConfig) -> int:
    return int(math.ceil((cfg.max_length + 64) / 64) * 64)


def _windows(cfg: TrainConfig, store, ids: list[int], partner: PartnerModel | None) -> list:
    if cfg.side == "partner":
        import envs
        from training.datasets.partner_side import partner_windows

        if len(envs.spec(cfg.task).roles) < 2:
            raise TrainingError(f"{cfg.task} has no partner side to learn (--side partner)")
        windows, skipped = partner_windows(store, ids)
        if not windows:
            raise TrainingError(
                f"--side partner: none of the {len(ids):,} episodes replays with recorded partner "
                "replies (an embedded oracle's answers are not recorded; a person's, a model's "
                "and the Car Dealer buyer's are)"
            )
        if skipped:
            print(
                f"note: --side partner leaves out {skipped:,} of {len(ids):,} episodes that do not replay "
                "with recorded partner replies",
                file=sys.stderr,
            )
        return windows
    return load_windows(
        store, ids, cfg.windows, cfg.truncation, cfg.task if cfg.goals else None, partner
    )


def prepare(
    cfg: TrainConfig, store, query: DatasetQuery, resume_from: Path | None = None
) -> Prepared:
    """Select and tokenise the data and build (or restore) the model."""
    _set_seed(cfg.seed)
    if resume_from is not None:
        model, tok, _, meta = load_checkpoint(resume_from, for_training=True)
        ds_info = json.loads((Path(meta["path"]) / "dataset.json").read_text())
        ids = [int(i) for i in ds_info["episode_ids"]]
        if ds_info.get("query") is not None:  # the run goes on with the data it started with
            query = DatasetQuery(**ds_info["query"])
        comp = ds_info.get("composition") or composition(store, ids, query)
        partner = (
            PartnerModel.from_json(ds_info["partner_model"])
            if ds_info.get("partner_model")
            else None
        )
        windows = _windows(cfg, store, ids, partner)
    else:
        ids = select_ids(store, query, cfg.top_mode)
        key = _cache_key(cfg, store, ids)
        if key in _KEPT:  # an earlier run of this process tokenised the same data
            kept = _KEPT[key]
            lm, _ = build_model(cfg, [], tokenizer=kept.tokenizer)
            model = _policy_value(cfg, lm)
            train_top_layers(model.lm, cfg.train_layers)
            return _finish(cfg, model, kept, fresh=True)
        comp = composition(store, ids, query)
        partner = fit_partner_model(store, ids, cfg.task) if cfg.partner_model else None
        windows = _windows(cfg, store, ids, partner)
        lm, tok = build_model(cfg, windows)
        model = _policy_value(cfg, lm)
    train_top_layers(model.lm, cfg.train_layers)
    from training.model.tokenization import encode

    ds = PackedDataset(
        windows,
        lambda t: encode(tok, t),
        tok.pad_token_id,
        gamma=cfg.gamma,
        discount_mode=cfg.discount_mode,
        max_length=cfg.max_length,
        reward_scale=cfg.reward_scale,
    )
    if cfg.algo == "qsft":
        from training.offline.qsft import prepare_rewards

        prepare_rewards(ds, cfg)
    if cfg.dedupe:
        ds.deduplicate()
    prep = Prepared(model, tok, ds, ids, query, comp, dataset_actions(windows), partner)
    if resume_from is None and _KEEP[0]:
        _KEPT[_cache_key(cfg, store, ids)] = replace(prep, model=None)  # not the run's model
    return _finish(cfg, model, prep, fresh=resume_from is None)


def _finish(cfg: TrainConfig, model: PolicyValueModel, prep: Prepared, fresh: bool) -> Prepared:
    if cfg.algo in ("mc", "ilql") and cfg.head_bias is None and fresh:
        cfg.head_bias = round(float(prep.dataset.ret[prep.dataset.act].mean()), 4)
        model.init_head_bias(cfg.head_bias)
    return Prepared(
        model,
        prep.tokenizer,
        prep.dataset,
        prep.episode_ids,
        prep.query,
        prep.composition,
        prep.actions,
        prep.partner_model,
    )


_KEEP = [False]
_KEPT: dict[tuple, Prepared] = {}
"""Tokenised datasets kept for the next runs of this process (:func:`keep_datasets`)."""


def keep_datasets(on: bool = True) -> None:
    """Keep each tokenised dataset for the later runs of this process that train on the same
    episodes with the same data settings (several runs in one process: ``lmrl train`` called in
    process by ``experiments/gpu_campaign.py``); ``False`` forgets them. The windows of 10^5
    dialogues take minutes to tokenise: a campaign's BC, MC and ILQL runs of two seeds then do
    it once. Off by default: one ``lmrl train`` command has nothing to share."""
    _KEEP[0] = on
    if not on:
        _KEPT.clear()


def _cache_key(cfg: TrainConfig, store, ids: list[int]) -> tuple:
    """What a tokenised dataset depends on: the store, the episodes, the data settings and the
    tokenizer (a ``tiny`` model's BPE is learnt from the data under the seed)."""
    data = (
        "task task_options windows max_length truncation goals side partner_model dedupe "
        "gamma discount_mode reward_scale tokenizer vocab_size model"
    ).split()
    qsft = (cfg.qsft_reward,) if cfg.algo == "qsft" else None  # it rewrites the rewards
    seed = cfg.seed if cfg.model == "tiny" else None
    values = json.dumps([getattr(cfg, k) for k in data], sort_keys=True, default=str)
    return (str(getattr(store, "path", id(store))), hash(tuple(ids)), values, qsft, seed)


def _policy_value(cfg, lm) -> PolicyValueModel:
    """The language model with the algorithm's heads, as the config asks."""
    return PolicyValueModel(
        lm,
        cfg.algo,
        target=cfg.target,
        pi_beta=cfg.pi_beta,
        head_bias=cfg.head_bias,
        head_act=cfg.head_act,
    )
