"""data.generate: the same records as ``lmrl generate`` wrote before it moved out of the CLI."""

from __future__ import annotations

import pytest

import envs
from data.generate import generate
from data.records import EpisodeRecord, StepRecord, Who
from data.store import Store
from envs.core import episode_success

CLOCK = {"started_at", "ended_at", "created_at", "uid", "origin"}
"""Columns that differ between two runs (times; the uid and origin each store gives a row)."""


def generate_as_before(
    store: Store, task_id: str, policy: str, episodes: int, seed: int, batch: int
) -> None:
    """The loop ``cmd_generate`` ran before the restructure (scripted policy, built-in partner)."""
    spec = envs.spec(task_id)
    partner = Who("scripted", spec.partner) if spec.partner else None
    agent = envs.make_policy(task_id, policy)
    task = envs.make(task_id)
    who = Who(agent.kind, agent.name)
    buf: list[EpisodeRecord] = []
    try:
        for n in range(episodes):
            ep = envs.run_episode(task, agent, seed + n)
            steps = [
                StepRecord(t.action, t.observation, t.reward, t.terminated, t.truncated, t.info)
                for t in ep.transitions
            ]
            success = episode_success(
                task.spec, ep.transitions[-1].info if ep.transitions else None, ep.total_return
            )
            buf.append(
                EpisodeRecord(
                    task.spec.id,
                    task.spec.version,
                    seed + n,
                    ep.first_observation,
                    steps,
                    who,
                    partner=partner,
                    source="scripted",
                    options={},
                    success=success,
                )
            )
            if len(buf) >= batch:
                store.write_episodes(buf)
                buf.clear()
        store.write_episodes(buf)
    finally:
        task.close()


def rows(store: Store) -> list[tuple[dict, list[dict]]]:
    out = []
    for ep in store.recent_episodes(1000)[::-1]:
        steps = [{k: v for k, v in s.items() if k not in CLOCK} for s in store.steps(ep["id"])]
        out.append(({k: v for k, v in ep.items() if k not in CLOCK}, steps))
    return out


@pytest.mark.parametrize(
    "task_id,policy",
    [
        ("maze-fo", "behaviour"),
        ("wordle", "random"),
        ("twenty-questions", "behaviour"),
        ("car-dealer", "behaviour"),
    ],
)
def test_generate_writes_the_records_it_wrote_before(tmp_path, task_id, policy):
    new, old = Store(tmp_path / "new.db"), Store(tmp_path / "old.db")
    played = []
    agent = envs.make_policy(task_id, policy)
    res = generate(new, task_id, agent, 7, seed=11, batch=3, on_episode=played.append)
    generate_as_before(old, task_id, policy, 7, 11, 3)
    assert played == list(range(1, 8)) and res.written == 7 and res.options == {}
    got, want = rows(new), rows(old)
    assert got == want
    assert res.total_return == pytest.approx(sum(ep["return"] for ep, _ in got))
    assert res.successes == sum(bool(ep["success"]) for ep, _ in got)
    new.close()
    old.close()


class _Learnt:
    """Says, like a checkpoint does, which task options it learnt."""

    kind = "checkpoint"
    name = "small-words"
    meta = {"task": "wordle", "task_options": {"words": "small"}}

    def reset(self, task, seed=None):
        self.task = task

    def act(self, history):
        return "a b o u t\n"


def test_a_checkpoint_plays_and_logs_the_options_it_learnt(store):
    res = generate(store, "wordle", _Learnt(), 2, seed=3)
    assert res.options == {"words": "small"}
    eps = store.recent_episodes(5)
    assert all(e["options"] == {"words": "small"} and e["source"] == "agent" for e in eps)
    assert {(e["agent_kind"], e["agent_name"]) for e in eps} == {("checkpoint", "small-words")}
    res = generate(store, "wordle", _Learnt(), 1, seed=3, options={"words": "standard"})
    assert res.options == {"words": "standard"}  # given options win


class _DiesOnEpisode:
    """A partner (a model endpoint) that fails on the first move of episode ``n`` (from 0)."""

    kind, name = "http", "dies"

    def __init__(self, n: int) -> None:
        self.n, self.resets = n, -1

    def reset(self, task, seed=None):
        self.resets += 1

    def act(self, history):
        if self.resets >= self.n:
            raise RuntimeError("the endpoint went away")
        return "Yes.\n"


def test_a_run_that_fails_keeps_the_episodes_that_finished(store):
    agent = envs.make_policy("twenty-questions", "behaviour")
    with pytest.raises(RuntimeError, match="went away") as e:
        generate(store, "twenty-questions", agent, 5, partner=_DiesOnEpisode(2), batch=200)
    assert [ep["seed"] for ep in store.recent_episodes(10)] == [1, 0]
    assert e.value.__notes__ == [f"kept the 2 episodes that finished in {store.path}"]
