"""``lmrl reproduce``: the recipe table and each run's flags, the CI across seeds, the table against
BC, and the subcommand's arguments. Running the steps is in test_reproduce_runs.py."""

from __future__ import annotations

import pytest

import envs
from training.reproduce.recipes import ALGORITHMS, RECIPES, canonical, train_flags
from training.reproduce.report import markdown, seed_ci, versus_bc


def test_every_task_has_a_recipe_and_table2_row():
    assert set(RECIPES) == set(envs.core.registry.builtin_ids())
    for task, r in RECIPES.items():
        assert set(r.episodes) == {"smoke", "cpu", "gpu"}, task
        for algo in ("bc", "%bc", "mc", "ilql", "ppo", "online-filtered-bc"):
            assert r.table2(algo) is not None, (task, algo)
        assert r.table2("qsft") is None


def test_train_flags_skip_the_builtin_evaluation_and_carry_options():
    flags = train_flags("wordle-lmrl", "ilql", "cpu")
    assert flags[flags.index("--eval-episodes") + 1] == "0"
    assert flags[flags.index("--option") + 1] == "words=small"
    mine = train_flags("wordle-lmrl", "ilql", "cpu", {"vocab_file": "lmrl.txt"})  # LMRL's own list
    assert mine[mine.index("--option") + 1] == "vocab_file=lmrl.txt" and "words=small" not in mine
    assert "--eval-every" in train_flags("maze-fo", "ppo", "smoke")
    # long offline runs save part-way, so a stopped reproduction resumes from there
    cpu = train_flags("maze-po", "ilql", "cpu")
    assert cpu[cpu.index("--save-every") + 1] == "250" and "--save-every" not in train_flags(
        "maze-po", "ilql", "smoke"
    )
    with pytest.raises(ValueError):
        train_flags("maze-fo", "bc", "huge")


def _last(flags: list[str], name: str) -> str:
    """The value argparse keeps: the flag's last occurrence."""
    return flags[max(i for i, f in enumerate(flags) if f == name) + 1]


def test_a_task_sets_its_own_steps_for_one_budget():
    # textnav-po's figures are at 1,000 steps (ILQL at the budget's 3,000 did worse): its cpu
    # runs take that; other budgets and tasks keep theirs
    assert _last(train_flags("textnav-po", "ilql", "cpu"), "--max-steps") == "1000"
    assert _last(train_flags("textnav-po", "mc", "cpu"), "--max-steps") == "1000"
    assert _last(train_flags("maze-po", "ilql", "cpu"), "--max-steps") == "3000"
    assert "--max-steps" not in train_flags("textnav-po", "ilql", "gpu")
    assert _last(train_flags("textnav-po", "ilql", "smoke"), "--max-steps") == "3"
    assert _last(train_flags("maze-fo", "qsft", "cpu"), "--max-steps") == "3000"
    for algo in ("ppo", "online-filtered-bc"):  # maze-po's measured online recipe, each flag once
        po = train_flags("maze-po", algo, "cpu")
        assert (
            _last(po, "--rounds") == "24" and _last(po, "--lr") == "1e-4" and po.count("--lr") == 1
        )
        assert _last(train_flags("maze-fo", algo, "cpu"), "--rounds") == "6"
    for task, algo in (
        ("textnav-po", "ilql"),
        ("maze-fo", "qsft"),
    ):  # the command shows the flag once
        assert train_flags(task, algo, "cpu").count("--max-steps") == 1


def test_algorithm_spellings():
    assert canonical("pbc") == canonical("filtered-bc") == "%bc"
    assert [canonical(a) for a in ALGORITHMS] == list(ALGORITHMS)
    with pytest.raises(ValueError):
        canonical("dqn")


def test_seed_ci_is_a_t_interval():
    c = seed_ci([1.0, 2.0, 3.0])
    assert c["mean"] == 2.0 and c["n"] == 3
    assert c["ci_high"] - 2.0 == pytest.approx(4.303 * 1.0 / 3**0.5)
    assert seed_ci([5.0])["ci_low"] == 5.0
    assert seed_ci([1.0, None])["mean"] is None


def _row(seeds, success, normalised=None):
    """A summarised row as ``summarise`` writes it: success as a fraction, per seed."""
    return {
        "seeds": list(seeds),
        "success_rate": seed_ci([v / 100 for v in success]),
        "mean_return": seed_ci([0.0] * len(success)),
        "normalised_lmrl": seed_ci(normalised or [None] * len(success)),
    }


def test_every_algorithm_is_set_against_bc_rows_and_paired():
    # textnav-po's five-seed table: MC overlaps BC by 5 points; ILQL starts from each seed's BC
    algos = {
        "bc": _row(range(5), [4, 25, 64, 25, 42]),
        "mc": _row(range(5), [61, 78, 54, 82, 87]),
        "ilql": _row(range(5), [67, 65, 46, 24, 68]),
        "%bc": _row(range(3), [90, 91, 92]),
        "qsft": _row(range(5), [0, 0, 1, 0, 0]),
    }
    vs = versus_bc("textnav-po", algos)
    assert set(vs) == {"mc", "ilql", "%bc", "qsft"} and {v["metric"] for v in vs.values()} == {
        "success_rate"
    }
    assert vs["mc"]["cis_apart"] == "overlap" and vs["%bc"]["cis_apart"] == "above"
    assert vs["qsft"]["cis_apart"] == "below"
    assert vs["mc"]["difference"]["mean"] == pytest.approx(0.404)
    # Welch with t(4): 7.5 to 73.3 points, as results/textnav-po-fresh-seeds reports
    assert vs["mc"]["difference"]["ci_low"] == pytest.approx(0.075, abs=5e-4)
    assert vs["mc"]["difference"]["ci_high"] == pytest.approx(0.733, abs=5e-4)
    assert vs["ilql"]["starts_from_bc"] and not vs["mc"]["starts_from_bc"]
    assert vs["ilql"]["paired"]["values"] == pytest.approx([0.63, 0.40, -0.18, -0.01, 0.26])
    assert vs["%bc"]["paired_seeds"] == [0, 1, 2]
    # a task with LMRL's constants is compared on them; no BC, nothing to compare
    norm = {
        "bc": _row(range(3), [0, 0, 0], [20.0, 22.0, 21.0]),
        "mc": _row(range(3), [0, 0, 0], [5.0, 6.0, 4.0]),
    }
    assert versus_bc("maze-fo", norm)["mc"]["cis_apart"] == "below"
    assert versus_bc("maze-fo", norm)["mc"]["metric"] == "normalised_lmrl"
    assert versus_bc("maze-fo", {"mc": norm["mc"]}) == {}
    one = versus_bc("maze-fo", {"bc": _row([0], [1], [1.0]), "mc": _row([0], [2], [3.0])})["mc"]
    assert (
        one["cis_apart"] is None
        and one["difference"]["ci_low"] is None
        and one["paired"]["mean"] == 2.0
    )


def test_the_table_says_which_rows_are_apart_from_bc():
    algos = {"bc": _row(range(3), [10, 12, 11]), "ppo": _row(range(3), [40, 45, 50])}
    for row in algos.values():
        row.update(eval_episodes=100, eval_method="sampled", wall_s=1.0, table2=None, commands=[])
    res = {
        "task": "wordle",
        "budget": "cpu",
        "training_seeds": [0, 1, 2],
        "train_flags": [],
        "dataset": {
            "episodes": 10,
            "seeds": "100000..100009",
            "mean_return": 0.0,
            "success_rate": 0.0,
            "wall_s": 1.0,
            "command": "lmrl generate",
        },
        "evaluation_seeds": "0..99",
        "recipe_note": "",
        "versions": {},
        "git_commit": "x",
        "table2_row": "Wordle",
        "algorithms": algos,
        "versus_bc": versus_bc("wordle", algos),
    }
    md = markdown(res)
    assert "**Against BC**, on the success rate, in points" in md
    assert "| Online PPO | **apart, above BC** | +34.0 (" in md
    paired, starts = md.split("| Online PPO | **apart, above BC** |")[1].split("|")[1:3]
    assert paired.startswith(" +34.0 (") and "over seeds 0, 1, 2" in paired and starts == " yes "
    assert md.rstrip().endswith("```")


def test_cli_has_reproduce():
    from lmrl_tui.cli import build_parser

    args = build_parser().parse_args(["reproduce", "maze-fo", "--budget", "smoke", "--seeds", "2"])
    assert (
        args.task == "maze-fo" and args.budget == "smoke" and args.seeds == 2 and callable(args.run)
    )
    from training.cli import build_parser as training_parser

    assert training_parser().parse_args(["reproduce", "--all"]).all


def test_task_or_all(capsys):
    from training.cli import build_parser
    from training.reproduce.command import run_reproduce

    assert run_reproduce(build_parser().parse_args(["reproduce"])) == 1
    assert "TASK or --all" in capsys.readouterr().err
