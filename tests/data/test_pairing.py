"""Two people, one episode, through the store: the lobby pairs a person asking for one side with
one waiting for the other (never with themselves, never with an app that has stopped), the host
records every step with who typed it and how, and a person who leaves ends it for both."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
from support.pairing_support import oracle_answers

from data.holds import new_holder
from data.paired_session import open_paired
from data.pairing import ask_to_pair, cancel, pairing
from data.store import Store

TQ = "twenty-questions"


def _dead_holder() -> str:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          check=True, capture_output=True, text=True)  # fmt: skip
    return f"{socket.gethostname()}:{int(done.stdout)}:gone"


def test_the_lobby_pairs_opposite_sides_and_no_one_with_themselves(store):
    ann, ann2, bo, cy = (new_holder() for _ in range(4))
    a = ask_to_pair(store, TQ, "guesser", "ann", ann, options={"secret": "guitar"}, seed=4)
    assert a.status == "waiting" and a.my_side == "guesser"
    assert ask_to_pair(store, TQ, "oracle", "ann", ann2).status == "waiting"  # herself: no
    assert ask_to_pair(store, TQ, "oracle", "bo", bo).status == "waiting"  # other options: no
    b = ask_to_pair(store, TQ, "any", "cy", cy, options={"secret": "guitar"})
    assert (b.status, b.my_side, b.other, b.seed, b.records) == (
        "paired",
        "oracle",
        "ann",
        4,
        False,
    )
    a = pairing(store, a.id, ann)
    assert (a.status, a.my_side, a.other, a.records) == ("paired", "guesser", "cy", True)
    stale = ask_to_pair(store, "car-dealer", "buyer", "dee", _dead_holder())
    fresh = ask_to_pair(store, "car-dealer", "seller", "eve", new_holder())
    assert fresh.status == "waiting" and pairing(store, stale.id, "x").status == "cancelled"
    assert cancel(store, fresh.id, fresh.my_holder).status == "cancelled"
    with pytest.raises(ValueError, match="cannot be played by two people"):
        ask_to_pair(store, "maze-fo", "agent", "ann", ann)


def _pair(db_path):
    guesser_store, oracle_store = Store(db_path), Store(db_path)  # two apps, two connections
    g = ask_to_pair(guesser_store, TQ, "guesser", "ann", new_holder(), seed=7,
                    options={"secret": "guitar"})  # fmt: skip
    o = ask_to_pair(oracle_store, TQ, "oracle", "bo", new_holder(), options={"secret": "guitar"})
    host = open_paired(guesser_store, pairing(guesser_store, g.id, g.my_holder), "ann")
    mirror = open_paired(oracle_store, pairing(oracle_store, o.id, o.my_holder), "bo")
    return guesser_store, host, mirror


def test_a_paired_episode_records_who_typed_each_step_and_how(db_path):
    store, host, mirror = _pair(db_path)
    assert host.episode_id == mirror.episode_id and mirror.observation == host.observation
    t = oracle_answers(mirror, ["No.", "sometimes", "Yes."])
    for q in ("Is it alive?", "is it made of wood", "Is it a guitar?"):
        host.human_input(q)
    t.join(5)
    assert host.done and mirror.done and host.success
    ep = store.episode(host.episode_id)
    assert (ep["status"], ep["player"], ep["partner_kind"], ep["partner_name"]) == (
        "finished", "ann", "human", "bo")  # fmt: skip
    steps = store.steps(host.episode_id)
    assert [s["typed"] for s in steps] == ["Is it alive?", "is it made of wood", "Is it a guitar?"]
    assert [(s["info"]["via"], s["info"]["by"]) for s in steps] == [("typed", "ann")] * 3
    partner = [s["info"]["partner"] for s in steps]
    assert [(p["via"], p["typed"], p["by"]) for p in partner] == [
        ("typed", "No.", "bo"), ("typed", "sometimes", "bo"), ("typed", "Yes.", "bo")]  # fmt: skip
    assert all(isinstance(p["think_ms"], int) for p in partner)


def test_a_person_who_leaves_ends_the_episode_for_both_keeping_what_was_played(db_path):
    store, host, mirror = _pair(db_path)
    t = oracle_answers(mirror, ["No."])
    host.human_input("Is it alive?")
    mirror.abandon()  # bo leaves
    t.join(5)
    assert host.partner_gone() == "bo"
    ep = store.episode(host.episode_id)
    assert ep["status"] == "abandoned" and ep["n_steps"] == 1
    assert store.steps(host.episode_id)[0]["info"]["partner"]["typed"] == "No."


def test_a_turn_committed_by_another_process_reaches_the_waiting_side_at_once(db_path):
    """The waiting side asks SQLite only when the store's write-ahead log changed (a stat is far
    cheaper than the query, 33 times a second in every waiting app): a turn another process
    commits still arrives within a poll or two, and one already there is read at once."""
    from data.pairing import post_turn, wait_turn

    store = Store(db_path)
    ann = ask_to_pair(store, TQ, "guesser", "ann", new_holder(), options={"secret": "guitar"})
    bo = ask_to_pair(store, TQ, "oracle", "bo", new_holder(), options={"secret": "guitar"})
    p = pairing(store, bo.id, bo.my_holder)
    post_turn(store, ann.id, "agent", 0, "Is it alive?", {"via": "typed"})
    assert wait_turn(store, p, "agent", 0)[0] == "Is it alive?"
    post = (
        "import sys, time; from data.store import Store; from data.pairing import post_turn; "
        "time.sleep(0.5); "
        f"post_turn(Store(sys.argv[1]), {ann.id}, 'agent', 1, 'Is it big?', {{'via': 'typed'}}); "
        "print(time.time())"
    )
    other = subprocess.Popen([sys.executable, "-c", post, str(db_path)], stdout=subprocess.PIPE,
                             text=True)  # fmt: skip
    text, said = wait_turn(store, p, "agent", 1)
    arrived = time.time()
    posted = float(other.communicate(timeout=30)[0])
    assert (text, said) == ("Is it big?", {"via": "typed"})
    assert arrived - posted < 0.5  # a few 30 ms polls, not the 1 s look that ignores the file


def test_a_paired_car_dealer_step_records_what_a_hot_seat_one_does(db_path):
    """The buyer's side of each step (``understood``, ``partner_replies``, the reply's ``typed``
    and ``via``) is recorded as when both people play in one app: ``understood`` is the built-in
    buyer's reading of the seller's line, None when a person buys, paired or not."""
    from data.session import PlaySession
    from envs.car_dealer.partner.person import buyer_decision, buyer_message
    from envs.players.human import HumanAgent

    lines = ["Hello! What are you looking for?", "A 2022 Toyota RAV4 for $31,000."]
    replies = [
        buyer_message("Hi, I want a Toyota SUV."),
        buyer_decision("Deal.", True, 32000, 31000),
    ]
    store = Store(db_path)
    buyer = HumanAgent("bo", "buyer")
    answers = iter(replies)
    buyer.on_request = lambda role, history: buyer.answer(next(answers))
    hot_seat = PlaySession(store, "car-dealer", partner=buyer, player="ann", seed=5)
    hot_seat.start()
    a = ask_to_pair(store, "car-dealer", "seller", "ann", new_holder(), seed=5)
    b = ask_to_pair(Store(db_path), "car-dealer", "buyer", "bo", new_holder())
    host = open_paired(store, pairing(store, a.id, a.my_holder), "ann")
    mirror = open_paired(Store(db_path), pairing(store, b.id, b.my_holder), "bo")
    t = oracle_answers(mirror, replies)
    for line in lines:
        hot_seat.human_input(line)
        host.human_input(line)
    t.join(5)
    assert hot_seat.done and host.done and mirror.done
    apart, paired = store.steps(hot_seat.episode_id), store.steps(host.episode_id)

    def buyer_side(step):
        info = step["info"]
        said = {k: v for k, v in info["partner"].items() if k not in ("by", "think_ms")}
        return info["understood"], info["partner_replies"], said, step["observation"]

    assert [buyer_side(s) for s in paired] == [buyer_side(s) for s in apart]
    assert [s["info"]["understood"] for s in paired] == [None, None]
    assert [s["info"]["partner"]["by"] for s in paired] == ["bo", "bo"]
