"""Task facts live on the task's spec, nowhere else: no list of task ids outside envs/, and the
trainers, evaluation and views read the spec."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import envs
from envs.core.checker import check_task

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("envs", "data", "training", "lmrl_tui", "bench", "experiments", "scripts")
_ID_LIKE = re.compile(r"^(maze|textnav|text|wordle|chess|endgames?|twenty|guess|car)(-[a-z]+)+$")


def _string_constants(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def test_every_task_id_spelled_in_the_code_is_a_task() -> None:
    known = set(envs.ids())
    bad = []
    for pkg in PRODUCT:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            for line, text in _string_constants(path):
                if _ID_LIKE.match(text) and text not in known:
                    bad.append(f"{path.relative_to(ROOT)}:{line}: {text!r}")
    assert not bad, "task ids that are no task:\n" + "\n".join(bad)


def test_the_scan_finds_a_misspelt_id(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text('RERANK = ("maze-fo", "text-nav")\n')
    found = [t for _, t in _string_constants(tmp_path / "x.py") if _ID_LIKE.match(t)]
    assert found == ["maze-fo", "text-nav"]


@pytest.mark.parametrize(
    "task_id", [t for t in envs.core.builtin_ids() if t not in ("chess", "endgames")]
)
def test_check_task(task_id: str) -> None:
    """The contract (API shape, determinism, replay, rewards, horizon, nasty input, spec facts);
    chess and endgames are checked with the engine in test_chess_engine.py."""
    check_task(task_id)


def test_facts_on_the_specs() -> None:
    facts = {t: envs.spec(t) for t in envs.core.builtin_ids()}
    assert {t for t, s in facts.items() if s.window == "step"} == {"maze-fo", "chess", "endgames"}
    assert {t for t, s in facts.items() if s.window == "history"} == {
        "textnav-fo",
        "textnav-po",
        "car-dealer",
    }
    assert {t for t, s in facts.items() if s.decoding == "rerank"} == {
        "maze-fo",
        "maze-po",
        "textnav-fo",
        "textnav-po",
        "chess",
        "endgames",
    }
    assert {t for t, s in facts.items() if s.reply_kind == "yes-no"} == {"twenty-questions"}
    assert {t for t, s in facts.items() if s.exact_evaluation} == {"maze-fo"}
    assert not envs.spec("maze-fo", layout="umaze").exact_evaluation


@pytest.mark.parametrize("task_id", ["textnav-fo", "textnav-po"])
@pytest.mark.parametrize("algo", ["mc", "ilql", "qsft"])
def test_textnav_value_based_policies_decode_with_the_reranker(task_id: str, algo: str) -> None:
    from training.config import TrainConfig, resolve

    assert resolve(TrainConfig(algo=algo, task=task_id)).decoding == "rerank"
    assert resolve(TrainConfig(algo="bc", task=task_id)).decoding == "sample"


def test_exact_evaluation_of_the_optimal_policy_is_the_optimum() -> None:
    from envs.maze.engine import ACTIONS

    task = envs.make("maze-fo")
    t = task.tables

    def optimal(history, actions):
        cell = t.obs_fo.index(history[-1].text)
        return [1.0 if a == ACTIONS[t.optimal[cell]] else 0.0 for a in actions]

    res = task.exact_evaluation(optimal)
    assert res["mean_return"] == pytest.approx(-6.84) == task.optimal_mean_return()
    assert res["success_rate"] == pytest.approx(1.0) and res["optimal_cells"] == 25
