"""The command line refuses a bad campaign in one line: ``lmrl serve --campaign`` with a field
that cannot be used, ``--vs paired`` with a side named, ``lmrl stats --campaign`` with an unknown
name (the file format itself: tests/data/test_campaigns.py)."""

from __future__ import annotations

from lmrl_tui.cli import main

BAD = """
name = "week-1"
[[assignment]]
id = "ask"
task = "twenty-questions"
side = "guesser"
episodes = 3

[[assignment]]
task = "twenty-questions"
side = "oracle"
partner = "built-in"
episodes = 1
"""


def test_lmrl_serve_refuses_a_bad_campaign_in_one_line(tmp_path, capsys):
    bad = tmp_path / "c.toml"
    bad.write_text(BAD, encoding="utf-8")
    assert main(["--db", str(tmp_path / "s.db"), "serve", "--campaign", str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert "assignment[2].partner" in err and "\n" not in err, err
    paired = ["serve", "--task", "twenty-questions", "--vs", "paired", "--as", "oracle"]
    assert main(["--db", str(tmp_path / "s.db"), *paired]) == 1
    assert "with --vs paired leave --as out" in capsys.readouterr().err
    assert main(["--db", str(tmp_path / "s.db"), "stats", "--campaign", "nope"]) == 1
    assert "no campaign 'nope' in this store" in capsys.readouterr().err
