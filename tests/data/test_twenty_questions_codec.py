"""LMRL's Twenty Questions / Guess My City JSON formats: export, import, round trips."""

from __future__ import annotations

import io
import json

import pytest

import envs
from data.datasets import DatasetQuery, load_episodes, select_episode_ids
from data.io.formats import FormatError, export_episodes, import_episodes
from data.store import EpisodeRecord, StepRecord, Who

LMRL_20Q = [
    {
        "lines": ["Is it an animal? No.", "Is it a vehicle? Yes.", "Is it a car? Yes."],
        "correct": True,
        "word": ["Car"],
    },
    {"lines": ["Is it a fruit? Yes.", "Is it red? No."], "correct": False, "word": ["Banana"]},
    {
        "lines": [f"Is it thing {i}? No." for i in range(20)],
        "correct": False,
        "word": ["Airplane", "Plane"],
    },
]
LMRL_CITY = [
    {
        "lines": ["Is it hot? Or cold? It is hot and humid.", "Is it Delhi? Yes."],
        "correct": True,
        "word": "delhi,india",
    },
]


def record(task: str, seed: int, policy: str, **opts) -> EpisodeRecord:
    ep = envs.run_episode(envs.make(task, **opts), envs.make_policy(task, policy), seed)
    steps = [
        StepRecord(t.action, t.observation, t.reward, t.terminated, t.truncated, t.info)
        for t in ep.transitions
    ]
    return EpisodeRecord(
        task,
        1,
        seed,
        ep.first_observation,
        steps,
        Who("scripted", policy),
        options=opts,
        success=bool(ep.transitions[-1].info.get("success")),
    )


def export(store, task: str, status: str = "finished") -> list:
    out = io.StringIO()
    export_episodes(store, out, "lmrl", DatasetQuery(task=task, status=status))
    return json.loads(out.getvalue())


def test_export_matches_lmrl_format(store):
    t = envs.make("twenty-questions", secret="Car")
    t.reset(0)
    steps = []
    for q in ("Is it an animal?\n", "Is it a vehicle", "Is it a car?\n"):
        s = t.step(q)
        steps.append(StepRecord(q, s.observation, s.reward, s.terminated, s.truncated, s.info))
    store.write_episodes(
        [
            EpisodeRecord(
                "twenty-questions",
                1,
                0,
                "Questions:\n",
                steps,
                Who("human", "me"),
                options={"secret": "Car"},
            )
        ]
    )
    assert export(store, "twenty-questions") == [
        {
            "lines": ["Is it an animal? No.", "Is it a vehicle? Yes.", "Is it a car? Yes."],
            "correct": True,
            "word": ["Car", "Automobile"],
        }
    ]


@pytest.mark.parametrize(
    ("task", "items"), [("twenty-questions", LMRL_20Q), ("guess-city", LMRL_CITY)]
)
def test_import_lmrl_file_and_export_it_back(tmp_path, store, task, items):
    src = tmp_path / "lmrl.json"
    src.write_text(json.dumps(items))
    assert import_episodes(store, src, "lmrl", task) == len(items)
    eps = list(load_episodes(store, select_episode_ids(store, DatasetQuery(task=task))))
    first = eps[0]
    assert first.steps[0]["action"].endswith("?\n") and first.steps[-1]["observation"].endswith(
        "\n"
    )
    assert first.total_return == -(len(items[0]["lines"]) - 1)
    assert bool(first.episode["success"]) == items[0]["correct"]
    if task == "guess-city":  # split at the last "? "
        assert first.steps[0]["action"] == "Is it hot? Or cold?\n"
        assert first.steps[0]["observation"] == "It is hot and humid.\n"
    assert export(store, task, status="any") == items
    # the unfinished conversation (not correct, fewer than 20 lines) stays out by default
    assert export(store, task) == [c for c in items if c["correct"] or len(c["lines"]) == 20]


def test_import_marks_done_as_lmrl_does(tmp_path, store):
    src = tmp_path / "lmrl.json"
    src.write_text(json.dumps(LMRL_20Q))
    import_episodes(store, src, "lmrl", "twenty-questions")
    eps = {
        len(e.steps): e
        for e in load_episodes(
            store, select_episode_ids(store, DatasetQuery(task="twenty-questions", status="any"))
        )
    }
    assert eps[3].steps[-1]["terminated"] and eps[3].steps[-1]["reward"] == 0.0
    assert eps[20].steps[-1]["truncated"] and not eps[20].steps[-1]["terminated"]
    assert not (eps[2].steps[-1]["terminated"] or eps[2].steps[-1]["truncated"])
    assert eps[2].episode["meta"]["partial"] is True and eps[2].episode["status"] == "abandoned"
    assert eps[3].episode["status"] == eps[20].episode["status"] == "finished"


@pytest.mark.parametrize("task", ["twenty-questions", "guess-city"])
def test_round_trip_of_generated_episodes(tmp_path, store, task):
    recs = [record(task, seed, pol) for seed in range(6) for pol in ("behaviour", "strong")]
    store.write_episodes(recs)
    first = export(store, task)
    assert len(first) == len(recs) and any(c["correct"] for c in first)
    assert all(len(c["lines"]) == len(r.steps) for c, r in zip(first, recs, strict=True))
    src = tmp_path / "out.json"
    src.write_text(json.dumps(first))
    from data.store import Store

    other = Store(tmp_path / "other.db")
    try:
        assert import_episodes(other, src, "lmrl", task) == len(recs)
        assert export(other, task) == first
        returns = [
            e.total_return
            for e in load_episodes(other, select_episode_ids(other, DatasetQuery(task=task)))
        ]
        assert returns == [sum(s.reward for s in r.steps) for r in recs]
    finally:
        other.close()


def test_city_word_is_city_comma_country(store):
    store.write_episodes([record("guess-city", 3, "strong", secret="Sao Paulo")])
    (item,) = export(store, "guess-city")
    assert item["word"] == "sao paulo,brazil" and item["correct"] is True


@pytest.mark.parametrize(
    "bad",
    [
        [{"lines": ["no question mark here"], "correct": False, "word": ["Car"]}],
        [{"lines": "Is it? No.", "correct": False, "word": ["Car"]}],
        [{"lines": [], "correct": False, "word": 3}],
        {"lines": []},
    ],
)
def test_bad_files_are_format_errors(tmp_path, store, bad):
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(bad))
    with pytest.raises(FormatError):
        import_episodes(store, src, "lmrl", "twenty-questions")
