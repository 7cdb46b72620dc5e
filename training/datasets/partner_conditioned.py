"""A partner model learnt from the same data, and the partner-conditioned training windows and
prompts of ``lmrl train --partner-model`` (no torch at import).

After Hong, Levine & Dragan's offline RL that learns to influence people: a policy and a value
function that know what kind of partner they face adapt to it, and can steer a suboptimal partner
towards better outcomes. The partner model here is a multinomial naive Bayes classifier over the
words of everything the partner said so far (:func:`said_by_partner`), fitted
on the training episodes whose partner *type* the store records. In this project that is the
biased Car Dealer buyers (``--option buyer_bias=mixed``; the last step's ``info["buyer_bias"]``):
none, anchoring or feature.

:meth:`PartnerModel.line` summarises the model's belief after a history as one line,
``"Buyer model: anchoring 60%, feature 10%, none 30%\\n"`` (percentages rounded to 10), which
:func:`condition` puts at the end of every training prompt, right before the action (where a prompt
cut from the left keeps it), and which a checkpoint agent puts after its history when it plays
(:meth:`training.agents.checkpoint_agent.CheckpointAgent.prompt`), so training and play read the same text.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from training.datasets.windows import Window


def _car_dealer_label(info: Mapping[str, Any]) -> str | None:
    bias = info.get("buyer_bias")
    return bias.get("kind") if isinstance(bias, Mapping) else None


PARTNER_TYPES: dict[str, tuple[str, Callable[[Mapping[str, Any]], str | None]]] = {
    "car-dealer": ("Buyer", _car_dealer_label),
}
"""Per task: the partner's name in the model's line, and how to read an episode's partner type
from its last step's ``info`` (None: not recorded)."""

_WORD = re.compile(r"[a-z]+")
MAX_WORDS = 3000
"""The model keeps this many of the data's most frequent words (others are ignored)."""


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def partner_label(task_id: str, last_info: Mapping[str, Any] | None) -> str | None:
    """The partner's type in an episode (None: the task records none, or this episode lacks it)."""
    kind = PARTNER_TYPES.get(task_id)
    return kind[1](last_info) if kind is not None and isinstance(last_info, Mapping) else None


@dataclass
class PartnerModel:
    """Multinomial naive Bayes: P(type | the partner's words so far)."""

    task: str
    who: str
    labels: list[str]
    log_prior: dict[str, float]
    log_word: dict[str, dict[str, float]]
    """label -> word -> log P(word | label) (Laplace-smoothed over the kept vocabulary)."""
    log_unseen: dict[str, float] = field(default_factory=dict)
    """label -> log P of a kept word the label's episodes never used."""

    def __post_init__(self) -> None:
        self._vocab = set().union(*(set(t) for t in self.log_word.values()))

    def posterior(self, partner_texts: Sequence[str]) -> dict[str, float]:
        """P(type | everything the partner said), labels in :attr:`labels` order."""
        score = dict(self.log_prior)
        for text in partner_texts:
            for w in words(text):
                for lab in self.labels:
                    table = self.log_word[lab]
                    if w in table:
                        score[lab] += table[w]
                    elif w in self._vocab:
                        score[lab] += self.log_unseen[lab]
        top = max(score.values())
        ex = {lab: math.exp(s - top) for lab, s in score.items()}
        total = sum(ex.values())
        return {lab: ex[lab] / total for lab in self.labels}

    def line(self, partner_texts: Sequence[str]) -> str:
        """The model's belief as the line the policy and values are conditioned on."""
        post = self.posterior(partner_texts)
        parts = ", ".join(f"{lab} {round(post[lab] * 10) * 10}%" for lab in self.labels)
        return f"{self.who} model: {parts}\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "who": self.who,
            "labels": self.labels,
            "log_prior": self.log_prior,
            "log_word": self.log_word,
            "log_unseen": self.log_unseen,
        }

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> PartnerModel:
        return cls(
            str(obj["task"]),
            str(obj["who"]),
            list(obj["labels"]),
            dict(obj["log_prior"]),
            {k: dict(v) for k, v in obj["log_word"].items()},
            dict(obj.get("log_unseen") or {}),
        )


def fit(
    task_id: str, episodes: Sequence[tuple[Sequence[str], str]], alpha: float = 1.0
) -> PartnerModel:
    """Fit the model on ``(partner texts of an episode, its partner type)`` pairs."""
    if task_id not in PARTNER_TYPES:
        raise ValueError(
            f"--partner-model needs a task whose stored episodes record the partner's type "
            f"({', '.join(PARTNER_TYPES)}), not {task_id}"
        )
    if not episodes:
        raise ValueError(
            "--partner-model found no episode with a recorded partner type (Car Dealer: "
            "generate the data with --option buyer_bias=mixed)"
        )
    labels = sorted({lab for _, lab in episodes})
    per_label: dict[str, Counter[str]] = {lab: Counter() for lab in labels}
    n_label: Counter[str] = Counter()
    for texts, lab in episodes:
        n_label[lab] += 1
        for t in texts:
            per_label[lab].update(words(t))
    total = Counter()
    for c in per_label.values():
        total.update(c)
    vocab = [w for w, _ in total.most_common(MAX_WORDS)]
    log_word: dict[str, dict[str, float]] = {}
    log_unseen: dict[str, float] = {}
    for lab in labels:
        c = per_label[lab]
        denom = sum(c[w] for w in vocab) + alpha * len(vocab)
        log_word[lab] = {w: math.log((c[w] + alpha) / denom) for w in vocab if c[w]}
        log_unseen[lab] = math.log(alpha / denom)
    n = sum(n_label.values())
    prior = {lab: math.log(n_label[lab] / n) for lab in labels}
    return PartnerModel(task_id, PARTNER_TYPES[task_id][0], labels, prior, log_word, log_unseen)


def said_by_partner(history: Sequence[Any]) -> list[str]:
    """What the partner has said in an agent's history (``envs.core.Text`` items): every
    observation after the first (the task's opening, the same in every episode)."""
    return [t.text for t in history[1:] if not t.is_action]


def condition(
    windows: Sequence[Window], model: PartnerModel, observations: Sequence[str]
) -> list[Window]:
    """An episode's one-action windows (window k: the prompt before its k-th action), each prompt
    and next prompt followed by the model's line after what the partner had said by then (the
    observations of the steps before)."""
    from training.datasets.windows import Window

    if not all(w.keep_end and len(w.segments) == 2 for w in windows):
        raise ValueError("--partner-model needs one window per step (--windows history or step)")
    out: list[Window] = []
    for k, w in enumerate(windows):
        (prompt, _, r0), action = w.segments
        said = list(observations[:k])
        nxt = None
        if w.next_prompt is not None:
            nxt = w.next_prompt + model.line(list(observations[: k + 1]))
        out.append(
            Window(
                [(prompt + model.line(said), False, r0), action],
                w.done,
                nxt,
                w.episode,
                keep_end=w.keep_end,
            )
        )
    return out
