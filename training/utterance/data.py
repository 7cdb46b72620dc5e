"""Stored episodes as utterance-level transitions: one per agent turn, the reward of that turn,
and γ once per turn (LMRL's per-turn discount)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from data.datasets import load_episodes
from training.errors import TrainingError
from training.utterance.features import dialogue_turns, turn_features


@dataclass(frozen=True)
class Dialogue:
    """One episode: ``turns`` (T + 1: the opening, then each action with what followed it), the
    ``actions`` taken (T, as indices into the candidate list), their ``rewards`` and whether the
    last one ``ended`` the episode (a time limit counts as an end, as in LMRL-Gym)."""

    turns: tuple[tuple[int, ...], ...]
    actions: tuple[int, ...]
    rewards: tuple[float, ...]
    ended: bool
    won: bool = False
    """Whether the episode succeeded with its last action (the hindsight reader's label)."""


@dataclass(frozen=True)
class Corpus:
    dialogues: list[Dialogue]
    candidates: list[str]
    """The data's distinct actions, most frequent first (ties: first seen first)."""
    repeats: float
    """The share of episodes that say one action twice (where it is rare, the agent never does)."""
    finishers: tuple[int, ...] = ()
    """The candidates that ended a won episode (a question task's guesses), in candidate order."""


def agent_turns(episode) -> tuple[str, list[tuple[str, str, float]], bool, bool]:
    """(opening, [(action, what followed, reward)], ended, won) of a stored episode's agent side;
    won: it succeeded, and its last agent step ended it."""
    steps = [s for s in episode.steps if s.get("role", "agent") == "agent"]
    ended = bool(steps and (steps[-1]["terminated"] or steps[-1]["truncated"]))
    won = bool(steps and steps[-1]["terminated"] and episode.episode.get("success"))
    pairs = [(s["action"], s["observation"], float(s["reward"])) for s in steps]
    return episode.episode["first_observation"], pairs, ended, won


def load_corpus(store, ids: Sequence[int], max_candidates: int = 4096) -> Corpus:
    """The episodes ``ids`` as dialogues over the data's ``max_candidates`` commonest actions
    (an episode with a rarer action is kept up to that action)."""
    raw = []
    counts: dict[str, int] = {}
    repeating = 0
    for ep in load_episodes(store, list(ids)):
        opening, pairs, ended, won = agent_turns(ep)
        if not pairs:
            continue
        said = [a for a, _, _ in pairs]
        repeating += len(set(said)) < len(said)
        for a in said:
            counts[a] = counts.get(a, 0) + 1
        raw.append((opening, pairs, ended, won))
    if not raw:
        raise TrainingError("the dataset is empty: the selected episodes have no agent steps")
    candidates = sorted(counts, key=lambda a: -counts[a])[:max_candidates]
    index = {a: i for i, a in enumerate(candidates)}
    out, finishers = [], set()
    for opening, pairs, ended, won in raw:
        keep = []
        for p in pairs:
            if p[0] not in index:
                break
            keep.append(p)
        if not keep:
            continue
        turns = dialogue_turns(opening, [(a, o) for a, o, _ in keep])
        whole = len(keep) == len(pairs)
        if won and whole:
            finishers.add(index[keep[-1][0]])
        out.append(
            Dialogue(
                turns=tuple(turn_features(u, r) for u, r in turns),
                actions=tuple(index[a] for a, _, _ in keep),
                rewards=tuple(r for _, _, r in keep),
                ended=ended and whole,
                won=won and whole,
            )
        )
    return Corpus(out, candidates, repeating / len(raw), tuple(sorted(finishers)))


def returns_to_go(rewards: Sequence[float], gamma: float) -> list[float]:
    """G_t = r_t + γ G_{t+1}, per turn."""
    out, g = [0.0] * len(rewards), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        g = rewards[t] + gamma * g
        out[t] = g
    return out
