"""Does a checkpoint read the oracle's answers? On a task whose guesses name a secret (Twenty
Questions, Guess My City), play the behaviour asker's questions (never its guesses) for ``--turns``
turns on each evaluation seed, then score every data action that names a secret with the
checkpoint's reranking score (MC's Q + w·log π_β, ILQL's, BC's log-likelihood: what
``--decoding rerank`` chooses by; an utterance-level checkpoint's Q, or its policy's log-probability
for BC; with ``--head aim`` its hindsight reader's logit) and rank the secrets by their best
guess's score.

Printed per checkpoint, as ``name value`` lines and one JSON line:

* ``mean_rank``: where the true secret ranks (1 = first) after its own dialogue;
* ``mean_rank_other_answers``: where it ranks after the next seed's dialogue (another secret's
  answers): a model that reads the answers ranks the truth higher after its own dialogue; one
  that ranks guesses by a fixed order ranks it the same either way;
* ``chance_rank``: a random order's mean rank; ``ideal_rank``: a reader that ranks the secrets
  consistent with every answer so far first, in random order (the task's question bank decides
  consistency), and ``consistent``: how many secrets that leaves on average.

Only secrets some data action guesses can be ranked (``secrets_guessable``); episodes whose
secret is not among them are counted in ``episodes_unrankable`` and left out.

``python experiments/guess_rank.py RUN [RUN ...] --task guess-city --episodes 100 --seed 1000 --turns 10``
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Iterator

import envs
from envs.core import Text
from envs.questions.text import clean_text


def dialogues(
    task_id: str, episodes: int, seed: int, turns: int
) -> Iterator[tuple[int, list[Text], int]]:
    """(secret, history, consistent secrets as a bit mask) per seed, after the behaviour asker's
    first ``turns`` questions (it stops early where the asker would guess)."""
    task = envs.make(task_id)
    asker = envs.make_policy(task_id, "behaviour")
    bank = envs.make_policy(task_id, "strong")._bank_fn()  # type: ignore[attr-defined]
    try:
        for s in range(seed, seed + episodes):
            task.reset(s)
            asker.reset(task, s)
            mask = bank.full
            for _ in range(turns):
                action = asker.act(task.history())
                if task.guess_target(clean_text(action)) is not None:
                    break
                step = task.step(action)
                qi = bank.index.get(action)
                if qi is not None:
                    mask = (mask & bank.consistent(qi, step.observation)) or mask
                if task.done:
                    break
            yield task.secret, list(task.history()), mask
    finally:
        task.close()


def _rank(scores: dict[int, float], truth: int) -> float:
    """1-based rank of ``truth``; ties share the mean of their places."""
    above = sum(1 for v in scores.values() if v > scores[truth])
    ties = sum(1 for v in scores.values() if v == scores[truth])
    return above + (ties + 1) / 2


def figures(
    run: str, task_id: str, episodes: int, seed: int, turns: int, head: str = "score"
) -> dict:
    from training.agents.checkpoint_agent import load_agent

    agent = load_agent(run, decoding="rerank")
    task = envs.make(task_id)
    guesses: dict[int, list[str]] = {}
    for a in agent.candidates:
        target = task.guess_target(clean_text(a))
        if target is not None:
            guesses.setdefault(target, []).append(a)
    task.close()
    flat = [a for acts in guesses.values() for a in acts]
    owner = [t for t, acts in guesses.items() for _ in acts]

    def secret_scores(history: list[Text]) -> dict[int, float]:
        if hasattr(agent, "decoder"):
            scores, _ = agent.decoder.action_scores(agent.prompt(history), flat)
        else:  # an utterance-level checkpoint (--model utterance): the score it acts by
            scores = agent.scores(history, flat)[head]
        best: dict[int, float] = {}
        for t, v in zip(owner, scores.tolist(), strict=True):
            best[t] = max(v, best.get(t, float("-inf")))
        return best

    rows = list(dialogues(task_id, episodes, seed, turns))
    guessable = set(guesses)
    own, other, ideal, left = [], [], [], []
    for i, (secret, history, mask) in enumerate(rows):
        if secret not in guessable:
            continue
        own.append(_rank(secret_scores(history), secret))
        nxt = rows[(i + 1) % len(rows)]
        if nxt[0] != secret:
            other.append(_rank(secret_scores(nxt[1]), secret))
        consistent = sum(1 for t in guessable if (mask >> t) & 1)
        left.append(consistent)
        ideal.append((consistent + 1) / 2)
    m = len(guessable)

    def mean(xs: list[float]) -> float | None:
        return round(statistics.fmean(xs), 2) if xs else None

    return {
        "run": run,
        "task": task_id,
        "episodes": episodes,
        "seed": seed,
        "turns": turns,
        "head": head,
        "secrets_guessable": m,
        "episodes_unrankable": len(rows) - len(own),
        "mean_rank": mean(own),
        "top1": mean([float(r <= 1) for r in own]),
        "top10": mean([float(r <= 10) for r in own]),
        "mean_rank_other_answers": mean(other),
        "chance_rank": (m + 1) / 2,
        "ideal_rank": mean(ideal),
        "consistent": mean(left),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "runs", nargs="+", help="checkpoint folders (or run folders holding checkpoint/)"
    )
    ap.add_argument("--task", default="guess-city", choices=["guess-city", "twenty-questions"])
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1000, help="first evaluation seed (default: 1000)")
    ap.add_argument(
        "--turns", type=int, default=10, help="behaviour questions before ranking (default: 10)"
    )
    ap.add_argument(
        "--head",
        default="score",
        choices=["score", "aim"],
        help="utterance checkpoints: rank by the score it acts by (default) or by its hindsight "
        "reader (trained with --hindsight)",
    )
    args = ap.parse_args(argv)
    for run in args.runs:
        out = figures(run, args.task, args.episodes, args.seed, args.turns, args.head)
        for k, v in out.items():
            if k not in ("run", "task"):
                print(f"{k} {v}")
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
