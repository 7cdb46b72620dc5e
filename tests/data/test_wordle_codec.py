"""LMRL-Gym's Wordle JSONL format: export matches it, import reads it, and both round-trip."""

from __future__ import annotations

import io
import json

import envs
from data.datasets import DatasetQuery, load_episodes, select_episode_ids
from data.io.formats import export_episodes, import_episodes
from data.store import EpisodeRecord, StepRecord, Store, Who

# LMRL's own example line (docs/tasks.md §3.2, generated with LMRL-Gym's own generator).
LMRL_LINE = (
    '{"sequence": [["Wordle:\\n", 0.0], ["c l o w n\\n", 1.0], ["b y g b y\\n", 0.0], '
    '["d a n d y\\n", 1.0], ["b b y b b\\n", 0.0], ["k n o l l\\n", 1.0], ["g g g g g\\n", 0.0]], '
    '"reward": [-1, 0.0, -1, 0.0, 0, 0.0], "done": true}'
)


def record(
    task: str, seed: int, policy: str, actions: list[str] | None = None, **opts
) -> EpisodeRecord:
    t = envs.make(task, **opts)
    if actions is None:
        ep = envs.run_episode(t, envs.make_policy(task, policy), seed)
    else:
        ep = envs.replay(t, seed, actions)
    steps = [
        StepRecord(x.action, x.observation, x.reward, x.terminated, x.truncated, x.info)
        for x in ep.transitions
    ]
    return EpisodeRecord(
        task,
        1,
        seed,
        ep.first_observation,
        steps,
        Who("scripted", policy),
        success=bool(ep.transitions[-1].info.get("success")),
    )


def test_export_matches_lmrl_format(store):
    t = envs.make("wordle-lmrl")
    t.reset(0, {"answer": "about"})
    steps = []
    for a in ("crane", "x\n", "a b o u t\n"):
        s = t.step(a)
        steps.append(StepRecord(a, s.observation, s.reward, s.terminated, s.truncated, s.info))
    store.write_episodes(
        [EpisodeRecord("wordle-lmrl", 1, 0, "Wordle:\n", steps, Who("human", "me"))]
    )
    out = io.StringIO()
    assert export_episodes(store, out, "lmrl", DatasetQuery(task="wordle-lmrl")) == 1
    assert out.getvalue() == (
        '{"sequence": [["Wordle:\\n", 0.0], ["c r a n e\\n", 1.0], ["b b y b b\\n", 0.0], '
        '["x\\n", 1.0], ["\\n", 0.0], ["a b o u t\\n", 1.0], ["g g g g g\\n", 0.0]], '
        '"reward": [-1, 0.0, -1.0, 0.0, 0, 0.0], "done": true}\n'
    )


def test_import_lmrl_line_and_export_it_back(tmp_path, store):
    src = tmp_path / "lmrl.jsonl"
    src.write_text(LMRL_LINE + "\n")
    assert import_episodes(store, src, "lmrl", "wordle-lmrl") == 1
    (ep,) = load_episodes(store, select_episode_ids(store, DatasetQuery(task="wordle-lmrl")))
    assert ep.episode["success"] == 1 and ep.total_return == -2.0
    assert [s["action"] for s in ep.steps] == ["c l o w n\n", "d a n d y\n", "k n o l l\n"]
    assert ep.steps[-1]["terminated"] == 1
    out = io.StringIO()
    export_episodes(store, out, "lmrl", DatasetQuery(task="wordle-lmrl"))
    assert out.getvalue() == LMRL_LINE + "\n"


def test_round_trip_through_the_store(tmp_path, store):
    recs = [record("wordle", s, "behaviour") for s in range(25)]
    recs += [record("wordle", s, "strong") for s in range(100, 105)]
    recs.append(
        record(
            "wordle",
            7,
            "human",
            ["", "zzzzz", "a" * 300, "slate", "ünï", "crane"],
            bad_word_reward=-10.0,
        )
    )
    store.write_episodes(recs)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    with a.open("w") as f:
        assert export_episodes(store, f, "lmrl", DatasetQuery(task="wordle")) == 31
    other = Store(tmp_path / "other.db")
    assert import_episodes(other, a, "lmrl", "wordle") == 31
    with b.open("w") as f:
        export_episodes(other, f, "lmrl", DatasetQuery(task="wordle"))
    assert a.read_text() == b.read_text()
    first = json.loads(a.read_text().splitlines()[0])
    assert (
        first["sequence"][0] == ["Wordle:\n", 0.0]
        and len(first["reward"]) == len(first["sequence"]) - 1
    )
    x = list(load_episodes(store, select_episode_ids(store, DatasetQuery(task="wordle"))))
    y = list(load_episodes(other, select_episode_ids(other, DatasetQuery(task="wordle"))))
    assert [e.total_return for e in x] == [e.total_return for e in y]
    assert [e.episode["success"] for e in x] == [e.episode["success"] for e in y]
    other.close()
