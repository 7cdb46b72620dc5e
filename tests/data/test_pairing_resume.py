"""A paired episode whose two apps both stopped goes on with the same two people, each on their
side again, through the store: the first to come back waits, the other joins them, the host
replays the recorded steps and records the next ones after them (who typed each, as before); the
mirror replays the same steps. Each app here is a Store of its own on one file, and its process a
stand-in that is killed (support/app_processes.py): a holder whose process ended is a crashed app."""

from __future__ import annotations

import pytest
from support.app_processes import stand_ins
from support.pairing_support import oracle_answers

from data.holds import hold, new_holder
from data.paired_resume import abandon, ask_to_resume, open_resumed, paired_ids
from data.paired_session import open_paired
from data.pairing import ask_to_pair, cancel, pairing
from data.session import PlaySession
from data.store import Store
from envs.players.session import ResumeError

TQ = "twenty-questions"
OPTIONS = {"secret": "guitar"}


def _played_then_both_killed(db_path, make, questions, replies) -> int:
    """ann (guesser, her app records) and bo (oracle) play ``questions``, then both apps are
    killed: the mirror's waiting stops, nothing more is written, both processes end."""
    ann_app, bo_app = make("ann"), make("bo")
    store_a, store_b = Store(db_path), Store(db_path)
    g = ask_to_pair(store_a, TQ, "guesser", "ann", ann_app.holder, seed=7, options=OPTIONS)
    o = ask_to_pair(store_b, TQ, "oracle", "bo", bo_app.holder, options=OPTIONS)
    host = open_paired(store_a, pairing(store_a, g.id, ann_app.holder), "ann")
    hold(store_a, host.episode_id, ann_app.holder, "ann")  # as ann's app holds what it shows
    mirror = open_paired(store_b, pairing(store_b, o.id, bo_app.holder), "bo")
    t = oracle_answers(mirror, replies)
    for q in questions:
        host.human_input(q)
    mirror.remote.stop.set()  # the killed app's thread writes nothing on its way out
    t.join(5)
    ann_app.kill()
    bo_app.kill()
    return int(host.episode_id)


def test_both_apps_killed_then_both_people_come_back_each_on_their_side(db_path):
    store = Store(db_path)
    with stand_ins() as make:
        eid = _played_then_both_killed(db_path, make, ["Is it alive?", "is it made of wood"],
                                       ["No.", "sometimes"])  # fmt: skip
        assert store.episode(eid)["status"] == "in_progress"
        assert paired_ids(store, [eid, eid + 1]) == {eid}
        with pytest.raises(ResumeError, match="two people played it"):  # never hot-seat
            PlaySession.resume_episode(store, eid)
        with pytest.raises(ResumeError, match="played by ann and bo, not cy"):
            ask_to_resume(Store(db_path), eid, "cy", new_holder())
        # bo comes back first (his app starts again) and waits; ann's comes back later
        store_a, store_b = Store(db_path), Store(db_path)
        ann_app, bo_app = make("ann2"), make("bo2")
        b = ask_to_resume(store_b, eid, "bo", bo_app.holder)
        assert (b.status, b.my_side, b.other, b.episode_id) == ("waiting", "oracle", None, eid)
        tab = ask_to_resume(store_b, eid, "bo", new_holder())  # bo's second tab: not with himself
        assert tab.status == "waiting"
        lobby = ask_to_pair(Store(db_path), TQ, "guesser", "dee", new_holder(), options=OPTIONS)
        assert lobby.status == "waiting"  # the ordinary lobby never takes a come-back request
        a = ask_to_resume(store_a, eid, "ann", ann_app.holder)
        assert (a.status, a.my_side, a.other, a.records, a.seed) == (
            "paired", "guesser", "bo", True, 7)  # fmt: skip
        b = pairing(store_b, b.id, bo_app.holder)
        assert (b.status, b.my_side, b.other, b.records) == ("paired", "oracle", "ann", False)
        cancel(store_b, tab.id, tab.my_holder)
        host, mirror = open_resumed(store_a, a), open_resumed(store_b, b)
        assert len(host.transitions) == len(mirror.transitions) == 2
        assert host.observation == mirror.observation and host.episode_id == eid
        assert mirror.task.history() == host.task.history()  # the same conversation on both
        t = oracle_answers(mirror, ["Yes."])
        host.human_input("Is it a guitar?")
        t.join(5)
        assert host.done and mirror.done and host.success
    ep = store.episode(eid)
    assert (ep["status"], ep["success"], ep["n_steps"], ep["player"], ep["partner_name"]) == (
        "finished", 1, 3, "ann", "bo")  # fmt: skip
    steps = store.steps(eid)
    assert [s["idx"] for s in steps] == [0, 1, 2]
    assert [(s["typed"], s["info"]["via"], s["info"]["by"]) for s in steps] == [
        ("Is it alive?", "typed", "ann"),
        ("is it made of wood", "typed", "ann"),
        ("Is it a guitar?", "typed", "ann"),
    ]
    partner = [s["info"]["partner"] for s in steps]
    assert [(p["typed"], p["via"], p["by"]) for p in partner] == [
        ("No.", "typed", "bo"), ("sometimes", "typed", "bo"), ("Yes.", "typed", "bo")]  # fmt: skip
    rows = store.execute(
        "SELECT id, status, player, partner_player, agent_player, episode_id, ended_by "
        "FROM pairings WHERE episode_id = ? ORDER BY id",
        [eid],
    ).fetchall()
    assert [r[1:] for r in rows] == [
        ("ended", "ann", "bo", "first", eid, None),  # the first pairing, whose apps were killed
        ("ended", "bo", "ann", "second", eid, None),  # the come-back: bo asked, ann joined
        ("cancelled", "bo", None, None, eid, None),  # bo's second tab
    ]
    turns = store.execute(
        "SELECT side, n FROM pair_turns WHERE pairing_id = ? ORDER BY side, n", [rows[1][0]]
    ).fetchall()
    assert turns == [("agent", 2), ("partner", 0)]  # the next move, numbered after the replay


def test_no_come_back_while_an_app_of_the_episode_still_runs(db_path):
    """Only ann's app was killed: bo's app ends the episode for both in a moment (it notices);
    until then nobody can take it up again."""
    store = Store(db_path)
    with stand_ins() as make:
        ann_app, bo_app = make("ann"), make("bo")
        g = ask_to_pair(store, TQ, "guesser", "ann", ann_app.holder, seed=3, options=OPTIONS)
        o = ask_to_pair(store, TQ, "oracle", "bo", bo_app.holder, options=OPTIONS)
        host = open_paired(store, pairing(store, g.id, ann_app.holder), "ann")
        mirror = open_paired(store, pairing(store, o.id, bo_app.holder), "bo")
        ann_app.kill()
        with pytest.raises(ResumeError, match="bo's app is still in it"):
            ask_to_resume(store, host.episode_id, "ann", new_holder())
        assert mirror.partner_gone() == "ann"  # bo's app notices: abandoned for both
        with pytest.raises(ResumeError, match="not in progress"):
            ask_to_resume(store, host.episode_id, "ann", new_holder())


def test_one_who_waits_in_vain_leaves_it_for_later_or_marks_it_abandoned(db_path):
    store = Store(db_path)
    with stand_ins() as make:
        eid = _played_then_both_killed(db_path, make, ["Is it alive?"], ["No."])
        me = new_holder()
        a = ask_to_resume(store, eid, "ann", me)
        assert cancel(store, a.id, me).status == "cancelled"  # bo does not come: later
        assert store.episode(eid)["status"] == "in_progress"
        a = ask_to_resume(store, eid, "ann", me)  # another try, another day
        assert a.status == "waiting"
        abandon(store, eid, me, "ann")  # bo still does not come: she gives it up
        assert pairing(store, a.id, me).status == "cancelled"
    ep = store.episode(eid)
    assert (ep["status"], ep["n_steps"]) == ("abandoned", 1)
    assert store.execute("SELECT COUNT(*) FROM episode_holds").fetchone()[0] == 0
    with pytest.raises(ResumeError, match="not in progress"):
        ask_to_resume(store, eid, "bo", new_holder())
