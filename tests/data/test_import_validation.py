"""`lmrl import` is all or nothing and validated: every field of every episode is checked before
anything is written, and a bad file is one line naming the line and the field, exit status 2."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from support.episode_files import DELETE, maze_episode, with_field

from data.datasets import DatasetQuery, select_episode_ids
from data.io.formats import FormatError, export_episodes, import_episodes
from data.store import Store
from lmrl_tui.cli import main

GOOD = maze_episode()


def _write(path: Path, episodes: list[Any], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in episodes) + tail)
    return path


def _cli(capsys: pytest.CaptureFixture[str], db: Path, *args: str) -> tuple[int, str, str]:
    rc = main(["--db", str(db), "import", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def _count(db: Path) -> int:
    s = Store(db)
    try:
        return s.count()
    finally:
        s.close()


def test_a_truncated_last_line_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = json.dumps(GOOD)
    src = _write(tmp_path / "big.jsonl", [GOOD] * 1200, tail=line[: len(line) // 2])
    db = tmp_path / "e.db"
    rc, _, err = _cli(capsys, db, str(src))
    assert rc == 2
    assert err == "lmrl: error: line 1201: truncated JSON\n"
    assert _count(db) == 0


def test_an_error_anywhere_rolls_back_what_was_written_before(tmp_path: Path, store: Store) -> None:
    bad = copy.deepcopy(GOOD)
    bad["steps"][-1]["reward"] = "x"
    src = _write(tmp_path / "a.jsonl", [GOOD] * 3000 + [bad])
    with pytest.raises(FormatError, match=r"^line 3001: steps\[\d+\]\.reward "):
        import_episodes(store, src, "jsonl")
    assert store.count() == 0
    assert import_episodes(store, _write(tmp_path / "b.jsonl", [GOOD] * 3), "jsonl") == 3


def _set(path: str, value: Any) -> dict[str, Any]:
    return with_field(GOOD, path, value)


_DELETE = DELETE
NAN, INF = float("nan"), float("inf")

BAD_FIELDS = [
    # the failures a person found on main: tracebacks ...
    ("status", "bogus", r"status must be one of finished, in_progress, abandoned, not 'bogus'"),
    ("steps.0.action", None, r"steps\[0\]\.action must be a string, not null"),
    ("steps.1.action", {"a": 1}, r"steps\[1\]\.action must be a string, not an object"),
    ("steps.0.reward", NAN, r"steps\[0\]\.reward must be a finite number, not NaN"),
    ("labels.0", {"step_idx": 0}, r"labels\[0\] has no 'label'"),
    ("seed", 2**70, r"seed must be a whole number from -2\*\*63 to 2\*\*63-1"),
    # ... and values stored without a word
    ("task", 5, r"task must be a string, not 5"),
    ("task", "no-such-task", r"task 'no-such-task' is not a known task"),
    ("seed", "x", r"seed must be a whole number .*, not 'x'"),
    ("steps.0.reward", INF, r"steps\[0\]\.reward must be a finite number, not Infinity"),
    ("steps.0.info", [], r"steps\[0\]\.info must be a JSON object, not a list"),
    ("options", "abc", r"options must be a JSON object, not 'abc'"),
    ("steps.0.think_ms", "slow", r"steps\[0\]\.think_ms must be a whole number .*, not 'slow'"),
    ("success", "maybe", r"success must be true, false, 0 or 1 \(or null\), not 'maybe'"),
    ("player", 12, r"player must be a non-empty string or null, not 12"),
    # more of the schema
    ("task_version", "1", r"task_version must be a whole number"),
    ("task_version", 0, r"task_version must be a whole number from 1"),
    ("seed", True, r"seed must be a whole number"),
    ("seed", 1.5, r"seed must be a whole number"),
    ("steps.0.reward", "1", r"steps\[0\]\.reward must be a finite number, not '1'"),
    ("steps.0.reward", -INF, r"steps\[0\]\.reward must be a finite number, not -Infinity"),
    ("steps.0.reward", 10**400, r"steps\[0\]\.reward must be a finite number"),
    ("steps.0.reward", _DELETE, r"steps\[0\] has no 'reward'"),
    ("steps.0.observation", 3, r"steps\[0\]\.observation must be a string, not 3"),
    ("steps.0.typed", 3, r"steps\[0\]\.typed must be a string or null, not 3"),
    ("steps.0.terminated", "yes", r"steps\[0\]\.terminated must be true, false, 0 or 1"),
    ("steps.0.terminated", True, r"steps\[0\] is terminated but is not the last step"),
    (
        "steps.-1.terminated",
        False,
        r"status is 'finished' but the last step is neither terminated nor truncated",
    ),
    ("steps.0.role", "oracle", r"steps\[0\]\.role must be one of agent for maze-fo, not 'oracle'"),
    ("steps.0.role", 1, r"steps\[0\]\.role must be a string, not 1"),
    ("steps.0.think_ms", -1, r"steps\[0\]\.think_ms must be a whole number from 0"),
    ("steps.0.think_ms", 2.5, r"steps\[0\]\.think_ms must be a whole number"),
    ("steps.0.extra", 1, r"steps\[0\] has an unknown field 'extra'"),
    ("steps.0", "move up", r"steps\[0\] must be an object"),
    ("steps", {}, r"steps must be a list, not an object"),
    ("steps", [], r"status is 'finished' but the episode has no steps"),
    ("meta", [1], r"meta must be a JSON object, not a list"),
    (
        "steps.0.action",
        "up\ud800",
        r"steps\[0\]\.action holds a lone surrogate \(\\ud800\), not text",
    ),
    ("meta", {"k": ["\udc00"]}, r"meta holds a lone surrogate \(\\udc00\), not text"),
    ("options", {"x": NAN}, r"options must be a JSON object without NaN or Infinity"),
    ("first_observation", None, r"first_observation must be a string, not null"),
    ("first_observation", _DELETE, r"the episode has no 'first_observation'"),
    ("agent_name", 5, r"agent_name must be a non-empty string, not 5"),
    ("agent_kind", "", r"agent_kind must be a non-empty string"),
    ("partner_name", "bob", r"partner_name is given without partner_kind"),
    ("player", "", r"player must be a non-empty string or null"),
    (
        "source",
        "elsewhere",
        r"source must be one of human, scripted, agent, import, not 'elsewhere'",
    ),
    ("started_at", "yesterday", r"started_at must be an ISO 8601 time or null, not 'yesterday'"),
    ("return", "x", r"return must be a finite number"),
    ("colour", "red", r"the episode has an unknown field 'colour'"),
    ("labels", {}, r"labels must be a list or null, not an object"),
    ("labels.0.label", "  ", r"labels\[0\]\.label must be a non-empty string"),
    (
        "labels.0.step_idx",
        99,
        r"labels\[0\]\.step_idx must be a step of the episode \(0 to \d+\) or null",
    ),
    ("labels.0.value", 3, r"labels\[0\]\.value must be a string or null, not 3"),
    ("labels.0.mood", 3, r"labels\[0\] has an unknown field 'mood'"),
]


@pytest.mark.parametrize(("path", "value", "message"), BAD_FIELDS)
def test_a_bad_field_is_one_line_naming_line_and_field(
    tmp_path: Path, store: Store, path: str, value: Any, message: str
) -> None:
    src = _write(tmp_path / "bad.jsonl", [GOOD, GOOD, GOOD, _set(path, value)])
    with pytest.raises(FormatError, match=r"^line 4: " + message) as e:
        import_episodes(store, src, "jsonl")
    assert "\n" not in str(e.value)
    assert store.count() == 0


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("status", "bogus"),
        ("steps.0.action", None),
        ("seed", "x"),
        ("steps.0.reward", NAN),
        ("seed", 2**70),
    ],
)
def test_the_command_says_it_in_one_line_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str, value: Any
) -> None:
    src = _write(tmp_path / "bad.jsonl", [GOOD, _set(path, value)])
    db = tmp_path / "e.db"
    rc, out, err = _cli(capsys, db, str(src))
    assert rc == 2 and out == ""
    assert (
        err.startswith("lmrl: error: line 2: ") and err.count("\n") == 1 and "Traceback" not in err
    )
    assert _count(db) == 0


@pytest.mark.parametrize(
    ("path", "value", "stored"),
    [
        ("success", 1, 1),
        ("success", 0, 0),
        ("success", None, None),
        ("success", True, 1),
        ("seed", -(2**63), -(2**63)),
        ("seed", 2**63 - 1, 2**63 - 1),
        ("seed", None, None),
        ("player", "zed", "zed"),
        ("options", None, {}),
        ("meta", {"note": "ok"}, {"note": "ok"}),
    ],
)
def test_values_inside_the_schema_are_kept(
    tmp_path: Path, store: Store, path: str, value: Any, stored: Any
) -> None:
    src = _write(tmp_path / "ok.jsonl", [_set(path, value)])
    assert import_episodes(store, src, "jsonl") == 1
    assert store.episode(1)[path] == stored
    out = io.StringIO()
    assert export_episodes(store, out, "jsonl", DatasetQuery(task="maze-fo", split="train")) in (
        0,
        1,
    )


def test_a_seed_that_is_not_a_number_cannot_break_the_split(tmp_path: Path, capsys) -> None:
    db = tmp_path / "e.db"
    _cli(capsys, db, str(_write(tmp_path / "a.jsonl", [_set("seed", "x")])))
    assert (
        main(
            [
                "--db",
                str(db),
                "export",
                "--task",
                "maze-fo",
                "--split",
                "train",
                "-o",
                str(tmp_path / "out.jsonl"),
            ]
        )
        == 0
    )


# -- the file itself ----------------------------------------------------------------------------
def test_missing_file_directory_binary_and_bad_utf8(tmp_path: Path, capsys) -> None:
    db = tmp_path / "e.db"
    (tmp_path / "bin.jsonl").write_bytes(
        json.dumps(GOOD).encode() + b"\n" + b"\xff\xfe\x00garbage\n"
    )
    (tmp_path / "latin1.json").write_bytes(
        '[{"lines": ["Est-ce un caf\xe9? Oui."]}]'.encode("latin-1")
    )
    (tmp_path / "nul.jsonl").write_bytes(b"\x00\x01\x02\x03\n")
    cases = [
        ((str(tmp_path / "missing.jsonl"),), "no such file: "),
        ((str(tmp_path),), "is a directory, not a file"),
        ((str(tmp_path / "bin.jsonl"),), "line 2: not UTF-8 text (byte 0xff at column 1)"),
        (
            (str(tmp_path / "latin1.json"), "--format", "lmrl", "--task", "twenty-questions"),
            "line 1: not UTF-8 text (byte 0xe9 at column ",
        ),
        ((str(tmp_path / "nul.jsonl"),), "line 1: not valid JSON"),
    ]
    for args, message in cases:
        rc, _, err = _cli(capsys, db, *args)
        assert rc == 2 and message in err and err.count("\n") == 1, err
    assert _count(db) == 0


@pytest.mark.parametrize(
    ("name", "text", "args"),
    [
        ("empty.jsonl", "", ()),
        ("blank.jsonl", "\n  \n", ()),
        ("empty.json", "", ("--format", "lmrl", "--task", "twenty-questions")),
        ("list.json", "[ ]\n", ("--format", "lmrl", "--task", "guess-city")),
    ],
)
def test_an_empty_file_imports_nothing_and_says_so(
    tmp_path: Path, capsys, name: str, text: str, args: tuple[str, ...]
) -> None:
    (tmp_path / name).write_text(text)
    rc, out, err = _cli(capsys, tmp_path / "e.db", str(tmp_path / name), *args)
    assert rc == 0 and err == ""
    assert out.startswith("imported 0 episodes") and "holds no episodes" in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"lines": ["Is it? No."], "correct": false, "word": "x"},', r"^line 1: truncated JSON"),
        (
            '[{"lines": ["Is it red? No."], "correct": false, "word": "x"}\n {"lines": []}]',
            r"^line 2: not valid JSON \(expected ',' or '\]' after item 1\)",
        ),
        ('{"lines": []}', r"^line 1: expected a JSON list of episodes"),
        ("[]\n[]", r"^line 2: not valid JSON \(extra data after the list"),
        (
            '[\n {"lines": ["Is it red? No."], "correct": false, "word": ["Car"]},\n'
            ' {"lines": ["Is it red? No."], "correct": 7, "word": ["Car"]}\n]',
            r"^item 2 \(line 3\): correct must be",
        ),
    ],
)
def test_json_list_errors_name_the_line(
    tmp_path: Path, store: Store, text: str, message: str
) -> None:
    (tmp_path / "t.json").write_text(text)
    with pytest.raises(FormatError, match=message):
        import_episodes(store, tmp_path / "t.json", "lmrl", "twenty-questions")
    assert store.count() == 0


# -- unfinished conversations -----------------------------------------------------------------
PARTIAL_20Q = {
    "lines": ["Is it an animal? No.", "Is it a vehicle? Yes.", "Is it a car? No."],
    "correct": False,
    "word": ["Truck"],
}


@pytest.mark.parametrize(
    "lines", [PARTIAL_20Q["lines"], [*PARTIAL_20Q["lines"][:2], "Is it a car?"]]
)
def test_a_partial_conversation_is_not_finished_nor_exported_by_default(
    tmp_path: Path, store: Store, lines: list[str]
) -> None:
    (tmp_path / "p.json").write_text(json.dumps([dict(PARTIAL_20Q, lines=lines)]))
    assert import_episodes(store, tmp_path / "p.json", "lmrl", "twenty-questions") == 1
    ep = store.episode(1)
    assert ep["status"] == "abandoned" and ep["meta"]["partial"] is True and ep["n_steps"] == 3
    assert select_episode_ids(store, DatasetQuery(task="twenty-questions")) == []
    out = io.StringIO()
    assert export_episodes(store, out, "lmrl", DatasetQuery(task="twenty-questions")) == 0
    assert (
        export_episodes(
            store, out, "lmrl", DatasetQuery(task="twenty-questions", status="abandoned")
        )
        == 1
    )
    assert json.loads(out.getvalue().splitlines()[-1]) == [dict(PARTIAL_20Q, lines=lines)]


def test_a_question_without_an_answer_before_the_last_line_is_refused(
    tmp_path: Path, store: Store
) -> None:
    item = dict(PARTIAL_20Q, lines=["Is it an animal?", "Is it a car? Yes."], correct=True)
    (tmp_path / "q.json").write_text(json.dumps([item]))
    with pytest.raises(
        FormatError, match=r"^item 1 \(line 1\): lines\[0\] must read 'question\? answer'"
    ):
        import_episodes(store, tmp_path / "q.json", "lmrl", "twenty-questions")


@pytest.mark.parametrize(
    ("task", "item"),
    [
        ("maze-fo", [{"state": "s\n", "action": "move up\n", "reward": -1.0, "done": False}]),
        (
            "wordle",
            {
                "sequence": [["Wordle:\n", 0.0], ["c r a n e\n", 1.0], ["b b b b b\n", 0.0]],
                "reward": [-1, 0.0],
                "done": False,
            },
        ),
        (
            "textnav-fo",
            {"text_history": ["a room", "go west", "a hall"], "rewards": [0], "dones": [False]},
        ),
    ],
)
def test_lmrl_items_that_stop_before_the_end_are_not_finished(
    tmp_path: Path, store: Store, task: str, item: Any
) -> None:
    (tmp_path / "p.jsonl").write_text(json.dumps(item) + "\n")
    assert import_episodes(store, tmp_path / "p.jsonl", "lmrl", task) == 1
    assert store.episode(1)["status"] == "abandoned"
    assert select_episode_ids(store, DatasetQuery(task=task)) == []


def test_round_trip_of_a_valid_export_is_identical(tmp_path: Path, store: Store) -> None:
    eps = [maze_episode(seed) for seed in range(5)]
    src = _write(tmp_path / "a.jsonl", eps)
    assert import_episodes(store, src, "jsonl") == 5
    out = io.StringIO()
    export_episodes(store, out, "jsonl", DatasetQuery(task="maze-fo"))
    assert [json.loads(line) for line in out.getvalue().splitlines()] == eps
