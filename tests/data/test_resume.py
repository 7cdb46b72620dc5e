"""An episode left in progress (the app died) goes on where it stopped: its recorded steps are
replayed from its seed, scripted agents choose the same actions again and a person partner's
recorded replies are given back; a replay that differs, or a model side, is refused with the reason."""

from __future__ import annotations

import threading

import pytest

import envs
from data.session import PlaySession, partner_replies
from envs.players.session import HumanAgent, ResumeError


def crashed(
    store, task_id, seed, *, agent=None, partner=None, agent_choice=None, play
) -> PlaySession:
    """Play with ``play(session)``, then drop the session as a crash would (never abandoned)."""
    s = PlaySession(
        store,
        task_id,
        agent=agent,
        partner=partner,
        player="ann",
        seed=seed,
        agent_choice=agent_choice,
    )
    s.start()
    play(s)
    assert not s.done
    return s


def resumed_like(store, old: PlaySession) -> PlaySession:
    new = PlaySession.resume_episode(store, old.episode_id)
    assert new.episode_id == old.episode_id and new.seed == old.seed and new.player == "ann"
    assert [(t.action, t.step.observation, t.step.reward) for t in new.transitions] == [
        (t.action, t.step.observation, t.step.reward) for t in old.transitions
    ]
    assert new.total_return == old.total_return and new.observation == old.observation
    assert new.model_text() == old.model_text()
    return new


def test_a_person_in_the_maze_goes_on_and_the_steps_follow_on(store):
    old = crashed(
        store, "maze-po", 6, play=lambda s: [s.human_input(k) for k in ("up", "left", "down")]
    )
    new = resumed_like(store, old)
    assert new.state()["position"] == old.state()["position"]
    new.human_input("left")
    new.abandon()
    steps = store.steps(old.episode_id)
    assert [s["idx"] for s in steps] == [0, 1, 2, 3] and store.episode(old.episode_id)[
        "status"
    ] == "abandoned"


@pytest.mark.parametrize("task_id", ["wordle", "textnav-fo", "car-dealer", "twenty-questions"])
def test_a_scripted_agent_replays_its_actions(store, task_id):
    agent = envs.make_policy(task_id, "strong")
    old = crashed(
        store,
        task_id,
        3,
        agent=agent,
        agent_choice="strong",
        play=lambda s: [s.agent_step() for _ in range(2)],
    )
    new = resumed_like(store, old)
    assert new.agent is not None and new.agent_choice == "strong"
    expected = old.agent_action()  # what the crashed session would have played next
    assert new.agent_step().action == expected
    assert [s["idx"] for s in store.steps(old.episode_id)] == [0, 1, 2]


def test_a_person_buyer_at_the_car_dealer(store):
    buyer = HumanAgent("bob", role="buyer")

    def play(s):
        for line in ("Hi! I need something for the family.", "Maybe. What's the price?"):
            buyer.answer(line)
            s.agent_step()

    old = crashed(
        store,
        "car-dealer",
        5,
        agent=envs.make_policy("car-dealer", "strong"),
        partner=buyer,
        agent_choice="strong",
        play=play,
    )
    steps = store.steps(old.episode_id)
    assert [partner_replies(s["info"]) for s in steps] == [
        ["Hi! I need something for the family.\n"],
        ["Maybe. What's the price?\n"],
    ]
    new = resumed_like(store, old)
    assert (
        isinstance(new.partner, HumanAgent)
        and new.partner.name == "bob"
        and new.partner.role == "buyer"
    )
    answered = threading.Timer(
        0.2, new.partner.answer, ["Too much."]
    )  # the person answers the next line
    answered.start()
    out = new.agent_step()
    assert out.step.observation.startswith("Too much.")


def test_hot_seat_chess_replays_blacks_moves(store):
    black = HumanAgent("bea", role="black")

    def play(s):
        for white, reply in (("e4", "e5"), ("Nf3", "Nc6")):
            black.answer(reply)
            s.human_input(white)

    old = crashed(store, "chess", 1, partner=black, play=play)
    new = resumed_like(store, old)
    assert new.state()["fen"] == old.state()["fen"]


def test_a_replay_that_differs_is_refused_with_where(store):
    old = crashed(
        store, "maze-fo", 3, play=lambda s: [s.human_input(k) for k in ("up", "left", "down")]
    )
    store.db.execute(
        "UPDATE steps SET observation = 'elsewhere' WHERE episode_id = ? AND idx = 2",
        [old.episode_id],
    )
    store.db.conn.commit()
    with pytest.raises(ResumeError, match="step 3 does not replay"):
        PlaySession.resume_episode(store, old.episode_id)
    assert store.episode(old.episode_id)["status"] == "in_progress"  # nothing was written


def test_missing_partner_replies_are_refused_not_waited_for(store):
    oracle = HumanAgent("bob", role="oracle")

    def play(s):
        for _ in range(2):
            question = s.agent_action()
            oracle.answer("No.")
            s._apply(question, typed=None, think_ms=1)

    old = crashed(
        store,
        "twenty-questions",
        2,
        agent=envs.make_policy("twenty-questions", "strong"),
        partner=oracle,
        agent_choice="strong",
        play=play,
    )
    store.db.execute(
        "UPDATE steps SET info = json_remove(info, '$.partner') WHERE episode_id = ? AND idx = 1",
        [old.episode_id],
    )
    store.db.conn.commit()
    with pytest.raises(ResumeError, match="step 2 needs more replies"):
        PlaySession.resume_episode(store, old.episode_id)


class _Model:
    kind = "http"
    name = "tiny@127.0.0.1"

    def reset(self, task, seed=None):
        pass

    def act(self, history):
        return "No."


def test_model_sides_and_finished_episodes_are_not_resumed(store):
    old = crashed(
        store, "twenty-questions", 2, partner=_Model(), play=lambda s: s.human_input("is it alive")
    )
    with pytest.raises(ResumeError, match="its partner is a model"):
        PlaySession.resume_episode(store, old.episode_id)
    store.finish_episode(old.episode_id, status="abandoned")
    with pytest.raises(ResumeError, match="not in progress"):
        PlaySession.resume_episode(store, old.episode_id)


def test_unfinished_episodes_are_listed_newest_first(store):
    first = crashed(store, "maze-fo", 1, play=lambda s: None)
    second = crashed(store, "maze-fo", 2, play=lambda s: s.human_input("up"))
    done = crashed(store, "maze-fo", 3, play=lambda s: None)
    done.abandon()
    assert [e["id"] for e in store.unfinished_episodes()] == [second.episode_id, first.episode_id]


def test_a_person_oracle_s_reply_is_stored_as_typed_and_replayed_as_the_task_took_it(store):
    oracle = HumanAgent("bob", role="oracle")

    def play(s):
        for typed in ("y", "NO"):
            question = s.agent_action()
            oracle.answer(s.task.parse_reply(typed), typed=typed)
            s._apply(question, typed=None, think_ms=1)

    old = crashed(
        store,
        "twenty-questions",
        2,
        agent=envs.make_policy("twenty-questions", "strong"),
        partner=oracle,
        agent_choice="strong",
        play=play,
    )
    infos = [s["info"] for s in store.steps(old.episode_id)]
    assert [(i["partner"]["typed"], i["partner"]["reply"]) for i in infos] == [
        ("y", "Yes."),
        ("NO", "No."),
    ]
    assert [partner_replies(i) for i in infos] == [["Yes."], ["No."]]
    resumed_like(store, old)


def test_inputs_refused_before_a_keep_go_with_the_turn_they_were_tried_in(store):
    """Kept (ctrl+q, keep to resume): the refused inputs since the last step wait in the
    episode's meta, then go with the resumed session's next step (they were dropped)."""
    from envs.players.session import InvalidInput

    old = PlaySession(store, "wordle", player="ann", seed=3)
    old.start()
    old.human_input("crane")
    for typed in ("cranx", "ab"):
        with pytest.raises(InvalidInput):
            old.human_input(typed)
    old.suspend()
    ep = store.episode(old.episode_id)
    assert ep["status"] == "in_progress" and [a["typed"] for a in ep["meta"]["attempts"]] == [
        "cranx",
        "ab",
    ]
    new = PlaySession.resume_episode(store, old.episode_id)
    with pytest.raises(InvalidInput):
        new.human_input("zz")
    new.suspend()  # kept again before the next step: all three wait, once each
    assert [a["typed"] for a in store.episode(old.episode_id)["meta"]["attempts"]] == [
        "cranx",
        "ab",
        "zz",
    ]
    new = PlaySession.resume_episode(store, old.episode_id)
    new.human_input("slate")
    steps, ep = store.steps(old.episode_id), store.episode(old.episode_id)
    assert [a["typed"] for a in steps[1]["info"]["attempts"]] == ["cranx", "ab", "zz"]
    assert "attempts" not in (ep["meta"] or {}) and ep["meta"]["strict"] is False
    new.abandon()
    ep = store.episode(old.episode_id)
    assert ep["status"] == "abandoned" and "attempts" not in ep["meta"]
