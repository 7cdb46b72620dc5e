"""The session (envs.players.session, no store) and data's recorder: every event of a played episode
is written as it happens, and the episode reads back as it was played."""

from __future__ import annotations

import pytest

import envs
from data.recorder import BatchRecorder, EpisodeRecorder
from data.records import EpisodeRecord, StepRecord, Who
from data.store import Store
from envs.core import InvalidInput
from envs.players.agents import episode_source
from envs.players.session import EpisodeSession, HumanAgent


class Events:
    """A listener that only notes what it hears."""

    def __init__(self) -> None:
        self.seen: list[tuple] = []

    def episode_started(self, session) -> None:
        self.seen.append(("start", session.seed, session.observation))

    def step_taken(self, session, idx, outcome, info) -> None:
        self.seen.append(("step", idx, outcome.action, dict(info)))

    def episode_ended(self, session, status) -> None:
        self.seen.append(("end", status))


def test_the_session_tells_its_listener_in_order_and_keeps_no_store():
    events = Events()
    s = EpisodeSession("maze-fo", seed=4, listener=events)
    first = s.start()
    with pytest.raises(InvalidInput):
        s.human_input("fly away")
    s.human_input("left")
    s.abandon()
    assert events.seen[0] == ("start", 4, first)
    (_, idx, action, info) = events.seen[1]
    assert (idx, action) == (0, "move left\n")
    assert [a["typed"] for a in info["attempts"]] == [
        "fly away"
    ]  # the unusable try goes with the step
    assert events.seen[2] == ("end", "abandoned") and len(events.seen) == 3
    assert s.done and not hasattr(s, "store")


def test_the_source_rule():
    assert episode_source(None) == "human"
    assert episode_source("scripted", "human") == "human"  # a person as the partner
    assert episode_source("checkpoint") == episode_source("hf") == episode_source("http") == "agent"
    assert episode_source("scripted") == episode_source("random") == "scripted"
    assert EpisodeSession("maze-fo").source == "human"
    assert (
        EpisodeSession("maze-fo", agent=envs.make_policy("maze-fo", "behaviour")).source
        == "scripted"
    )


def test_a_human_episode_is_recorded_step_by_step_and_reads_back(store, db_path):
    recorder = EpisodeRecorder(store)
    s = EpisodeSession("maze-fo", player="kim", seed=7, listener=recorder)
    s.start()
    eid = recorder.episode_id
    keys = ["left", "up", "right"]
    for n, key in enumerate(keys, 1):
        s.human_input(key)
        other = Store(db_path)  # another process sees each step at once: it was committed
        assert len(other.steps(eid)) == n and other.episode(eid)["status"] == "in_progress"
        other.close()
    s.abandon()
    ep = store.episode(eid)
    assert (ep["task"], ep["seed"], ep["player"], ep["source"]) == ("maze-fo", 7, "kim", "human")
    assert (ep["agent_kind"], ep["status"], ep["n_steps"]) == ("human", "abandoned", 3)
    assert ep["meta"] == {"strict": False}
    steps = store.steps(eid)
    assert [st["typed"] for st in steps] == keys
    assert [st["action"] for st in steps] == [t.action for t in s.transitions]
    assert [st["observation"] for st in steps] == [t.step.observation for t in s.transitions]
    assert ep["return"] == sum(st["reward"] for st in steps) == s.total_return


def test_an_agent_episode_is_finished_with_its_success(store):
    recorder = EpisodeRecorder(store)
    agent = envs.make_policy("maze-fo", "optimal")
    s = EpisodeSession("maze-fo", agent=agent, seed=3, listener=recorder)
    s.start()
    while not s.done:
        s.agent_step()
    ep = store.episode(recorder.episode_id)
    assert (ep["status"], ep["success"], ep["source"], ep["agent_name"]) == (
        "finished",
        1,
        "scripted",
        agent.name,
    )
    assert ep["player"] is None and ep["meta"] == {}
    ref = envs.run_episode(envs.make("maze-fo"), envs.make_policy("maze-fo", "optimal"), 3)
    assert [st["action"] for st in store.steps(ep["id"])] == [t.action for t in ref.transitions]


def test_a_human_partner_is_recorded_as_the_partner(store):
    recorder = EpisodeRecorder(store)
    partner = HumanAgent("bob", role="oracle")
    s = EpisodeSession("twenty-questions", partner=partner, player="ann", seed=2, listener=recorder)
    s.start()
    ep = store.episode(recorder.episode_id)
    assert (ep["partner_kind"], ep["partner_name"], ep["source"]) == ("human", "bob", "human")
    s.abandon()
    assert store.episode(recorder.episode_id)["status"] == "abandoned"


def test_the_batch_recorder_writes_whole_batches(store):
    rec = EpisodeRecord(
        "maze-fo", 1, 0, "o\n", [StepRecord("a\n", "b\n", -1.0, True)], Who("scripted", "x")
    )
    with BatchRecorder(store, batch=3) as batch:
        for _ in range(4):
            batch.add(rec)
        assert store.count() == 3  # the first batch is written, the fourth episode is buffered
    assert store.count() == 4 and batch.written == 4
    with pytest.raises(RuntimeError), BatchRecorder(store, batch=10) as batch:
        batch.add(rec)
        raise RuntimeError("generation failed")
    assert store.count() == 4  # a failed block writes nothing of its open batch


SOME_OPTIONS = {
    "maze-fo": {"max_steps": 30},
    "wordle": {"words": "small"},
    "endgames": {"setups": "kRK"},
    "chess": {"elo": 1500},
    "car-dealer": {"reward_mode": "revenue"},
}


@pytest.mark.stockfish
@pytest.mark.parametrize("task_id", envs.ids())
def test_the_stored_options_are_complete_and_play_the_same_game(store, task_id):
    given = SOME_OPTIONS.get(task_id, {})
    s = EpisodeSession(task_id, seed=11, options=dict(given), listener=EpisodeRecorder(store))
    first = s.start()
    s.abandon()
    ep = store.recent_episodes(1)[0]
    stored = ep["options"]
    assert set(stored) >= set(s.task.spec.options) | set(given)  # defaults included
    if task_id == "endgames":
        assert stored["setups"] == ["kRK"] and stored["positions"] == "test"
    again = envs.make(task_id, **stored)
    try:
        assert again.reset(ep["seed"]) == first
    finally:
        again.close()


def test_rejected_attempts_after_the_last_step_are_kept_with_the_left_episode(store):
    recorder = EpisodeRecorder(store)
    s = EpisodeSession("wordle", seed=3, listener=recorder)
    s.start()
    s.human_input("crane")
    for typed in ("cranx", "ab"):
        with pytest.raises(InvalidInput):
            s.human_input(typed)
    s.abandon()
    ep = store.episode(recorder.episode_id)
    assert ep["status"] == "abandoned" and ep["meta"]["strict"] is False
    assert [a["typed"] for a in ep["meta"]["attempts"]] == ["cranx", "ab"]
    assert "attempts" not in store.steps(recorder.episode_id)[0]["info"]


def test_hints_and_list_choices_are_noted_on_the_step(store):
    recorder = EpisodeRecorder(store)
    s = EpisodeSession("textnav-fo", seed=3, listener=recorder)
    s.start()
    s.note_hint("legal_moves")
    s.note_hint("legal_moves")
    s.human_input("take stale food from table", chosen=True)
    s.human_input("w")
    steps = store.steps(recorder.episode_id)
    assert (
        steps[0]["info"] == {"hints": ["legal_moves"], "chosen": "list", "via": "list"}
        and steps[0]["typed"] is None
    )
    assert steps[1]["info"] == {"via": "typed"} and (steps[1]["typed"], steps[1]["action"]) == (
        "w",
        "go west\n",
    )
