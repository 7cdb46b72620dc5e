"""How much of a question task's outcome the dialogue so far predicts, and how much of it a goal
value checkpoint (``lmrl train mc --goals``) has learnt.

Prints one figure per line as ``name value unit``. Run:
``python experiments/goal_values.py guess-city DATA.db [--values RUN --held-out EVAL.db]``.

The bounds are the loss of ``lmrl train mc --goals`` (½ squared error, averaged over the two goal
copies of each step: *found* and its twin *not found*, whose targets are complementary, so it
equals ½ the Brier score of P(found)) for predictors that read the data directly: a constant 0.5
(``q_loss_constant`` of the run), the data's success rate (what the goal line alone is worth), the
rate per step, per (step, candidates left), and per (step, candidates left, whether the step's
question guesses a candidate still possible). Candidates are counted with the task's question
bank, which knows every secret's answer to every question: a value model that tracked the
dialogue as well would reach about these figures (in-sample bins over the whole data set, so
slightly optimistic). With ``--values``: the checkpoint's Q for the data's action at the first,
middle and last step of each held-out episode, per goal (mean, spread) and its loss there.
"""

from __future__ import annotations

import argparse
import collections
import statistics

import envs
from data.store import Store


def step_features(task: str, store: Store) -> list[tuple[tuple[int, int, bool], float]]:
    """Per stored step: ((step, candidates left capped at 12, guesses a possible secret), found)."""
    bank = envs.make_policy(task, "strong")._bank_fn()  # type: ignore[attr-defined]
    rows = []
    for ep in store.recent_episodes(10**9):
        found = 1.0 if ep["success"] else 0.0
        mask = bank.full
        for k, st in enumerate(store.steps(ep["id"])):
            qi = bank.index.get(st["action"])
            guess = bank.questions[qi].guess if qi is not None else None
            rows.append(
                (
                    (k, min(mask.bit_count(), 12), guess is not None and bool((mask >> guess) & 1)),
                    found,
                )
            )
            if qi is not None:
                mask = (mask & bank.consistent(qi, st["observation"])) or mask
    return rows


def binned_loss(rows, key) -> float:
    """½ the Brier score of each bin's own success rate."""
    by: dict[object, list[float]] = collections.defaultdict(list)
    for f, y in rows:
        by[key(f)].append(y)
    rate = {k: statistics.mean(v) for k, v in by.items()}
    return 0.5 * statistics.mean((rate[key(f)] - y) ** 2 for f, y in rows)


def checkpoint_figures(task: str, run: str, held_out: Store) -> dict[str, float]:
    from training.agents.checkpoint_agent import load_agent
    from training.agents.explain import token_terms
    from training.datasets.goals import achieved, goal_prompt, goals_for

    decoder = load_agent(run).decoder
    goals = goals_for(task)
    qs: dict[str, list[float]] = {g.name: [] for g in goals}
    errs = []
    for ep in held_out.recent_episodes(10**9):
        steps = held_out.steps(ep["id"])
        reached = achieved(task, ep["success"], steps[-1]["info"] if steps else None)
        text = ep["first_observation"]
        for k, st in enumerate(steps):
            if k in (0, len(steps) // 2, len(steps) - 1):
                for g in goals:
                    q = float(
                        token_terms(decoder, goal_prompt(text, g), [st["action"]])[0]["q"][-1]
                    )
                    qs[g.name].append(q)
                    errs.append(0.5 * (q - float(reached[g.name])) ** 2)
            text += st["action"] + st["observation"]
    out = {"values_loss_held_out": statistics.mean(errs)}
    for g in goals:
        key = g.name.replace(" ", "_")
        out[f"values_q_mean_{key}"] = statistics.mean(qs[g.name])
        out[f"values_q_spread_{key}"] = statistics.pstdev(qs[g.name])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("task", choices=["twenty-questions", "guess-city"])
    ap.add_argument("db", help="the store the values were (or would be) trained on")
    ap.add_argument("--values", help="a goal value checkpoint (lmrl train mc --goals --out RUN)")
    ap.add_argument("--held-out", help="a store of held-out episodes of the task (for --values)")
    args = ap.parse_args(argv)
    rows = step_features(args.task, Store(args.db))
    print(f"steps {len(rows)} steps")
    print(f"loss_constant_half {0.5 * statistics.mean((0.5 - y) ** 2 for _, y in rows):.4f} ½·MSE")
    for name, key in (
        ("success_rate", lambda f: 0),
        ("rate_per_step", lambda f: f[0]),
        ("rate_per_step_and_candidates", lambda f: f[:2]),
        ("rate_per_step_candidates_guess", lambda f: f),
    ):
        print(f"loss_{name} {binned_loss(rows, key):.4f} ½·MSE")
    if args.values:
        held = Store(args.held_out or args.db)
        for name, value in checkpoint_figures(args.task, args.values, held).items():
            print(f"{name} {value:.4f} {'½·MSE' if 'loss' in name else 'Q'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
