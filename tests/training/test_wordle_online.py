"""experiments/wordle_online.py end to end on the CPU with a few steps: the consistent player's
data, BC and online %BC per training seed, every checkpoint evaluated, and the table over seeds."""

from __future__ import annotations

import json
import sys

import pytest
from support.experiment_support import experiment_script


@pytest.mark.slow
def test_the_experiment_trains_evaluates_and_reports_over_seeds(tmp_path, monkeypatch, capsys):
    script = experiment_script("wordle_online")
    out = tmp_path / "wo"
    argv = [
        "wordle_online.py",
        "run",
        str(out),
        "--seeds",
        "0",
        "1",
        "--games",
        "40",
        "--bc-steps",
        "2",
        "--rounds",
        "1",
        "--eval-games",
        "3",
        "--algorithms",
        "bc",
        "online-filtered-bc",
    ]
    monkeypatch.setattr(sys, "argv", argv)
    script.main()
    result = json.loads((out / "results.json").read_text())
    assert [r["algorithm"] for r in result["rows"]] == ["bc", "online-filtered-bc"]
    for r in result["rows"]:
        assert [s["seed"] for s in r["seeds"]] == [0, 1] and r["score"]["n"] == 2
        assert all(s["games"] == 3 for s in r["seeds"])
    ref = result["reference"]
    assert ref["strong_mean_return"] > ref["data_mean_return"]  # the score's 100 lies above its 50
    steps = result["steps"]
    assert steps["data"]["rc"] == 0 and "--policy consistent" in steps["data"]["cmd"]
    assert (
        steps["train bc-s0"]["commit"]
        == result["commit"]
        == result["rows"][0]["seeds"][0]["commit"]
    )
    online = steps["train online-filtered-bc-s1"]["cmd"]
    assert "--init OUT/runs/bc-s1" in online and str(tmp_path) not in json.dumps(steps)
    assert (
        steps["eval online-filtered-bc-s0"]["rc"] == 0
        and "eval OUT/runs/online-filtered-bc-s0" in steps["eval online-filtered-bc-s0"]["cmd"]
    )
    for r in result["rows"][1:]:  # each online seed against the BC it started from
        assert r["gain_seeds"] == [0, 1] and r["score_gain"]["n"] == 2
    assert "| online-filtered-bc | 2 |" in (out / "results.md").read_text()
    # a second run finds everything done and trains nothing
    capsys.readouterr()
    script.main()
    assert (
        json.loads((out / "results.json").read_text())["steps"]["train bc-s0"]
        == steps["train bc-s0"]
    )


def _eval_file(out, name, ret, success):
    (out / "eval").mkdir(parents=True, exist_ok=True)
    (out / "eval" / f"{name}.json").write_text(
        json.dumps(
            {"mean_return": ret, "success_rate": success, "episodes": 1000, "eval_seconds": 1.0}
        )
    )


def test_report_merges_the_seeds_of_an_earlier_run(tmp_path, capsys):
    """Seeds run in another session join the table: the earlier file's seeds that this folder lacks,
    with their commands and commit; this folder's own seeds win; other reference returns are refused."""
    script = experiment_script("wordle_online")
    first, second = tmp_path / "first", tmp_path / "second"
    for seed, (bc, online) in enumerate([(-4.6, -4.3), (-4.4, -4.2)]):
        _eval_file(first, f"bc-s{seed}", bc, 0.4)
        _eval_file(first, f"online-filtered-bc-s{seed}", online, 0.5)
    (first / "steps.json").write_text(
        json.dumps({"train bc-s0": {"cmd": "python -m lmrl_tui train bc", "rc": 0, "seconds": 9.0}})
    )
    earlier = script.report(first)
    _eval_file(second, "bc-s1", -4.0, 0.6)  # seed 1 again: this folder's figure is kept
    _eval_file(second, "bc-s2", -4.5, 0.45)
    _eval_file(second, "online-filtered-bc-s2", -4.1, 0.55)
    merged = script.report(second, [first / "results.json"])
    rows = {r["algorithm"]: r for r in merged["rows"]}
    assert [s["seed"] for s in rows["bc"]["seeds"]] == [0, 1, 2]
    assert [s["return"] for s in rows["bc"]["seeds"]] == [-4.6, -4.0, -4.5]
    assert rows["bc"]["seeds"][0]["commit"] == earlier["commit"]
    assert rows["online-filtered-bc"]["score_gain"]["n"] == 3 and rows["bc"]["score"]["n"] == 3
    assert merged["steps"]["train bc-s0"]["seconds"] == 9.0  # the earlier run's command comes along
    assert "| bc | 3 |" in (second / "results.md").read_text()
    bad = json.loads((first / "results.json").read_text())
    bad["reference"]["strong_mean_return"] += 1.0
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(SystemExit, match="reference"):
        script.report(second, [tmp_path / "bad.json"])
    capsys.readouterr()


def test_report_on_lmrls_game_adds_lmrls_score_and_hides_the_word_list(
    tmp_path, monkeypatch, capsys
):
    """``--task wordle-lmrl --vocab-file PATH``: the table gains LMRL's normalised score, shows the list
    as PATH (it is not ours to ship, nor is this machine's path), and refuses a ``wordle`` table's seeds."""
    from envs.wordle.engine import packaged_words

    script = experiment_script("wordle_online")
    words = tmp_path / "list.txt"
    words.write_text("\n".join(list(packaged_words("small.txt"))[:40]) + "\n")
    plain = tmp_path / "plain"
    _eval_file(plain, "bc-s0", -4.6, 0.4)
    script.report(plain)  # a words=small table
    monkeypatch.setattr(script, "TASK", "wordle-lmrl")
    monkeypatch.setattr(script, "OPTION", ["--option", f"vocab_file={words}"])
    out = tmp_path / "lmrl"
    for seed, (bc, online) in enumerate([(-4.6, -4.4), (-4.7, -4.4)]):
        for name, ret in ((f"bc-s{seed}", bc), (f"online-filtered-bc-s{seed}", online)):
            _eval_file(out, name, ret, 0.5)
            e = json.loads((out / "eval" / f"{name}.json").read_text())
            (out / "eval" / f"{name}.json").write_text(
                json.dumps({**e, "normalised_lmrl": 50 + 10 * (ret + 4.5)})
            )
    result = script.report(out)
    assert result["task"] == "wordle-lmrl" and result["options"] == ["vocab_file=PATH"]
    rows = {r["algorithm"]: r for r in result["rows"]}
    assert (
        rows["bc"]["lmrl"]["mean"] == pytest.approx(48.5)
        and rows["online-filtered-bc"]["lmrl"]["mean"] == 51
    )
    md = (out / "results.md").read_text()
    assert md.startswith("# wordle-lmrl (`--option vocab_file=PATH`)") and "| LMRL |" in md
    assert "--task wordle-lmrl --vocab-file PATH" in md
    assert str(tmp_path) not in md + json.dumps(result)
    with pytest.raises(SystemExit, match="a wordle table"):
        script.report(out, [plain / "results.json"])
    capsys.readouterr()
