"""Speed of the question tasks: episodes per second of generation (``lmrl generate``'s loop:
``envs.make_policy`` + ``envs.run_episode``), per task and scripted guesser, plus the one-off cost
of building the question bank and the oracle's answers per second.

Prints one figure per line as ``name value unit``. Usage: ``python bench/bench_dialogue_qa.py [N]``.
"""

from __future__ import annotations

import sys
import time

import envs

TASKS = ("twenty-questions", "guess-city")


def main(n: int = 1000) -> None:
    for task_id in TASKS:
        t0 = time.perf_counter()
        task = envs.make(task_id)
        warm = envs.make_policy(task_id, "strong")
        warm.reset(task, 0)
        warm.act(task.history())
        print(f"{task_id}.bank_build {time.perf_counter() - t0:.3f} s")
        for policy in ("behaviour", "strong", "random"):
            agent = envs.make_policy(task_id, policy)
            steps = 0
            t0 = time.perf_counter()
            for seed in range(n):
                steps += len(envs.run_episode(task, agent, seed).transitions)
            dt = time.perf_counter() - t0
            print(f"{task_id}.generate.{policy} {n / dt:.0f} episodes/s")
            print(f"{task_id}.generate.{policy}.steps {steps / dt:.0f} steps/s")
        oracle = envs.make(task_id)
        oracle.reset(0)
        questions = [f"Is it something number {i}?" for i in range(2000)]
        t0 = time.perf_counter()
        for q in questions:
            oracle.embedded_answer(q)
        print(
            f"{task_id}.oracle.new_questions {len(questions) / (time.perf_counter() - t0):.0f} answers/s"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
