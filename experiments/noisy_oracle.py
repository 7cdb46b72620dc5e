"""The question tasks' scripted askers with a person-like oracle: win rate and mean number of
questions of the ``strong`` and ``behaviour`` askers when the oracle is wrong 0 %, 15 % or 30 % of
the time, on Twenty Questions and Guess My City, and how many episodes asked a question twice.

The oracle is :class:`envs.questions.partner.NoisyOracle` as the task's partner: the embedded
oracle's answer, flipped with the given probability (for an open question: another secret's
answer), and at noise 15 % and 30 % also 10 % free-text replies ("Yes, usually.", "sometimes",
"no idea", "I don't know", "maybe"); it answers guesses truthfully (a person knows their own
secret), except in the ``noise15_guesses_flipped`` lines. At noise 0 % it answers exactly as the
embedded oracle does.
Seeds 0 .. N-1 (the same secrets and draws at every noise level).

Prints one figure per line as ``name value unit``. Usage: ``python experiments/noisy_oracle.py [N]``
(N = 200 episodes per figure).
"""

from __future__ import annotations

import sys
import time

import envs
from envs.questions.partner import NoisyOracle

TASKS = ("twenty-questions", "guess-city")
POLICIES = ("strong", "behaviour")
NOISE = (0.0, 0.15, 0.30)
FREE_TEXT = 0.1


def play(task_id: str, policy: str, person: NoisyOracle, n: int) -> tuple[int, int, int]:
    """Wins, questions asked and episodes with a repeated question over seeds 0 .. n-1."""
    wins = questions = repeats = 0
    for seed in range(n):
        task = envs.make(task_id, partner=person)
        ep = envs.run_episode(task, envs.make_policy(task_id, policy), seed)
        actions = [t.action for t in ep.transitions]
        wins += bool(ep.transitions[-1].info.get("success"))
        questions += len(actions)
        repeats += len(set(actions)) != len(actions)
    return wins, questions, repeats


def report(name: str, n: int, wins: int, questions: int, repeats: int) -> None:
    print(f"{name}.win_rate {wins / n:.3f} fraction")
    print(f"{name}.mean_questions {questions / n:.2f} questions")
    print(f"{name}.episodes_with_a_repeat {repeats} episodes", flush=True)


def main(n: int = 200) -> None:
    t0 = time.perf_counter()
    for task_id in TASKS:
        for policy in POLICIES:
            for noise in NOISE:
                person = NoisyOracle(flip=noise, free=FREE_TEXT if noise else 0.0)
                name = f"{task_id}.{policy}.noise{round(noise * 100)}"
                report(name, n, *play(task_id, policy, person, n))
            # a harsher person: right guesses denied 15 % of the time too
            person = NoisyOracle(flip=0.15, free=FREE_TEXT, flip_guesses=True)
            name = f"{task_id}.{policy}.noise15_guesses_flipped"
            report(name, n, *play(task_id, policy, person, n))
    print(f"noisy_oracle.wall {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
