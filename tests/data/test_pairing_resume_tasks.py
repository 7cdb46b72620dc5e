"""Come-back after both apps stopped (:mod:`data.paired_resume`) for the other paired tasks:
Car Dealer (the seller's app records, the buyer's mirrors) and Guess My City (the guesser's
records, the oracle's mirrors). The two people play some turns, both apps are killed, both come
back, each is on their side again with the same conversation, play goes on from where it stopped,
and every stored step says who typed it, before and after the stop. Twenty Questions:
test_pairing_resume.py."""

from __future__ import annotations

from support.app_processes import stand_ins
from support.pairing_support import oracle_answers

from data.holds import hold
from data.paired_resume import ask_to_resume, open_resumed
from data.paired_session import open_paired
from data.pairing import ask_to_pair, pairing
from data.store import Store
from envs.car_dealer.partner.person import buyer_decision, buyer_message


def _played_then_both_killed(db_path, make, task, options, moves, replies) -> int:
    """ann (the first side, her app records) and bo (the other side) play ``moves`` and
    ``replies``, then both apps are killed: nothing more is written, both processes end."""
    first, second = _sides(task)
    ann_app, bo_app = make("ann"), make("bo")
    store_a, store_b = Store(db_path), Store(db_path)
    a = ask_to_pair(store_a, task, first, "ann", ann_app.holder, seed=5, options=options)
    b = ask_to_pair(store_b, task, second, "bo", bo_app.holder, options=options)
    host = open_paired(store_a, pairing(store_a, a.id, ann_app.holder), "ann")
    hold(store_a, host.episode_id, ann_app.holder, "ann")  # as ann's app holds what it shows
    mirror = open_paired(store_b, pairing(store_b, b.id, bo_app.holder), "bo")
    t = oracle_answers(mirror, replies)
    for move in moves:
        host.human_input(move)
    mirror.remote.stop.set()  # the killed app's thread writes nothing on its way out
    t.join(5)
    ann_app.kill()
    bo_app.kill()
    return int(host.episode_id)


def _sides(task: str) -> tuple[str, str]:
    import envs

    roles = envs.spec(task).roles
    return roles[0], roles[1]


def _both_come_back(db_path, make, eid: int):
    """bo comes back first and waits; ann comes back and they are paired again: (her session,
    his), each replayed to where it stopped."""
    store_a, store_b = Store(db_path), Store(db_path)
    ann_app, bo_app = make("ann2"), make("bo2")
    b = ask_to_resume(store_b, eid, "bo", bo_app.holder)
    assert b.status == "waiting"
    a = ask_to_resume(store_a, eid, "ann", ann_app.holder)
    b = pairing(store_b, b.id, bo_app.holder)
    assert (a.status, a.records, b.status, b.records) == ("paired", True, "paired", False)
    return open_resumed(store_a, a), open_resumed(store_b, b)


def _authors(store: Store, eid: int) -> tuple[list[tuple], list[tuple]]:
    """Each step's (typed, via, by) for the first side and (typed, via, by) of the reply."""
    steps = store.steps(eid)
    assert [s["idx"] for s in steps] == list(range(len(steps)))
    mine = [(s["typed"], s["info"]["via"], s["info"]["by"]) for s in steps]
    theirs = [(s["info"]["partner"]["typed"], s["info"]["partner"]["via"],
               s["info"]["partner"]["by"]) for s in steps]  # fmt: skip
    return mine, theirs


def test_car_dealer_seller_and_buyer_come_back_each_on_their_side(db_path):
    store = Store(db_path)
    before = ["Hello! What are you looking for?", "We have a 2022 Toyota RAV4 for $33,000."]
    said = [buyer_message(s) for s in ("Hi, I want a Toyota SUV.", "Would you take $29,000?")]
    deal = buyer_decision("Deal.", True, 32000, 31000)  # the decision form's line
    with stand_ins() as make:
        eid = _played_then_both_killed(db_path, make, "car-dealer", {}, before, said)
        assert (store.episode(eid)["status"], store.episode(eid)["n_steps"]) == ("in_progress", 2)
        seller, buyer = _both_come_back(db_path, make, eid)
        assert (seller.pairing.my_side, buyer.pairing.my_side) == ("seller", "buyer")
        assert len(seller.transitions) == len(buyer.transitions) == 2
        assert seller.observation == buyer.observation == "Would you take $29,000?\n"
        assert buyer.task.history() == seller.task.history()  # the seller's view on both
        assert buyer.task.buyer_history() == seller.task.buyer_history()  # and the buyer's
        t = oracle_answers(buyer, [deal])
        seller.human_input("I can do $31,000.")
        t.join(5)
        assert seller.done and buyer.done and seller.success
    ep = store.episode(eid)
    assert (ep["status"], ep["success"], ep["n_steps"], ep["player"], ep["partner_name"]) == (
        "finished", 1, 3, "ann", "bo")  # fmt: skip
    mine, theirs = _authors(store, eid)
    assert mine == [(m, "typed", "ann") for m in [*before, "I can do $31,000."]]
    assert theirs == [(s, "typed", "bo") for s in [*said, deal]]
    last = store.steps(eid)[-1]["info"]
    assert last["decision"] == {"car_bought": True, "msrp": 32000, "buy_price": 31000}


def test_guess_my_city_guesser_and_oracle_come_back_each_on_their_side(db_path):
    store = Store(db_path)
    before, said = ["Is your city in Europe?", "Is it a capital?"], ["Yes.", "Yes."]
    with stand_ins() as make:
        eid = _played_then_both_killed(db_path, make, "guess-city", {"secret": "Paris"}, before,
                                       said)  # fmt: skip
        assert (store.episode(eid)["status"], store.episode(eid)["n_steps"]) == ("in_progress", 2)
        guesser, oracle = _both_come_back(db_path, make, eid)
        assert (guesser.pairing.my_side, oracle.pairing.my_side) == ("guesser", "oracle")
        assert len(guesser.transitions) == len(oracle.transitions) == 2
        assert oracle.task.history() == guesser.task.history()
        t = oracle_answers(oracle, ["No.", "Yes."])
        for q in ("Is it in Spain?", "Is your city Paris?"):
            guesser.human_input(q)
        t.join(5)
        assert guesser.done and oracle.done and guesser.success
    ep = store.episode(eid)
    assert (ep["status"], ep["success"], ep["n_steps"], ep["player"], ep["partner_name"]) == (
        "finished", 1, 4, "ann", "bo")  # fmt: skip
    mine, theirs = _authors(store, eid)
    assert mine == [
        (q, "typed", "ann") for q in [*before, "Is it in Spain?", "Is your city Paris?"]
    ]
    assert theirs == [(r, "typed", "bo") for r in [*said, "No.", "Yes."]]
