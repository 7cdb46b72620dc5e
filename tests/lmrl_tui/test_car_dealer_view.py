"""The Car Dealer play view, driven with Textual's Pilot: a person as the buyer or the seller."""

from __future__ import annotations

import contextlib

import envs
from data.session import PlaySession
from envs.core.session import HumanAgent
from lmrl_tui.app import make_app
from lmrl_tui.screens.play import PlayScreen
from lmrl_tui.views.car_dealer import CarDealerView, parse_dollars


@contextlib.asynccontextmanager
async def cancel_on_error(partner: HumanAgent):
    """A failed assertion must not leave the seller's worker waiting for the person forever."""
    try:
        yield
    except BaseException:
        partner.cancel()
        raise


async def wait_for_reply_request(pilot, screen, view) -> bool:
    """Let the scripted seller move until the person must answer; False if the episode ended."""
    for _ in range(150):
        await pilot.pause(0.02)
        if view.replying is not None:
            return True
        if screen.session.done:
            return False
    raise AssertionError("the seller never asked the buyer")


async def type_line(pilot, screen, text: str) -> None:
    """The person at the seller's side types a line (the buyer's reply comes in a worker)."""
    screen.query_one("#chat-input").value = text
    await pilot.press("enter")
    await screen.app.workers.wait_for_complete()
    await pilot.pause()


async def reply(pilot, screen, text: str) -> None:
    """The person at the buyer's side answers (never wait for workers: the seller's next step
    blocks until the person answers again)."""
    screen.query_one("#chat-input").value = text
    await pilot.press("enter")
    await pilot.pause()


async def test_person_as_buyer_closes_a_deal_with_the_strong_seller(store):
    app = make_app(store, player="ann")
    partner = HumanAgent("ann")
    async with app.run_test(size=(140, 40)) as pilot, cancel_on_error(partner):
        seller = envs.make_policy("car-dealer", "strong")
        screen = app.start_session("car-dealer", seller, partner, 4, "ann")
        screen.speed_index = 5
        await pilot.pause()
        view = screen.query_one(CarDealerView)
        persona = screen.session.task.state()["persona"]
        secret = view.query_one("#chat-secret")
        assert secret.display and f"${persona['budget']:,}" in str(secret.render())
        assert await wait_for_reply_request(pilot, screen, view)
        assert "What kind of car" in view.pending
        assert view.query_one("#deal-row").display
        # Nothing typed: explained, no reply sent.
        view.query_one("#chat-input").value = "   "
        await pilot.press("enter")
        await pilot.pause()
        assert view.replying == "buyer"
        await reply(pilot, screen, "I'd like a Toyota SUV with a sunroof and heated seats. Budget $30,000.")
        assert await wait_for_reply_request(pilot, screen, view)
        offer = view.pending
        assert "$" in offer
        price = view.query_one("#deal-price").value
        assert price and parse_dollars(price, "price") <= 30000
        view.query_one("#deal-msrp").value = "zero"
        view.query_one("#deal-accept").press()
        await pilot.pause()
        assert view.replying == "buyer"  # a bad MSRP is explained, not sent
        view.query_one("#deal-msrp").value = "32,000"
        view.query_one("#chat-input").value = "Deal, I'll take it."
        view.query_one("#deal-accept").press()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.session.done and screen.session.success
        text = str(view.render_transcript())
        assert "Deal, I'll take it." in text and "Output:" not in text
        assert "Sold for" in text
    ep = store.recent_episodes(1)[0]
    assert ep["task"] == "car-dealer" and ep["status"] == "finished" and ep["success"] == 1
    assert (ep["agent_kind"], ep["agent_name"]) == ("scripted", "strong")
    assert (ep["partner_kind"], ep["partner_name"], ep["player"]) == ("human", "ann", "ann")
    assert ep["source"] == "human"
    steps = store.steps(ep["id"])
    assert steps[-1]["observation"] == "Deal, I'll take it. \n"
    assert "Output: Decision=Accept MSRP=$32,000" in steps[-1]["info"]["partner"]["typed"]
    # The recorded partner replies replay the episode exactly.
    replies = [r for s in steps for r in s["info"]["partner_replies"]]
    again = envs.replay(envs.make("car-dealer", partner_replies=replies), ep["seed"], [s["action"] for s in steps])
    assert [(t.observation, t.reward) for t in again.transitions] == [(s["observation"], s["reward"]) for s in steps]


async def test_person_as_buyer_must_decide_when_the_talk_is_forced_to_end(store):
    app = make_app(store, player="bo")
    partner = HumanAgent("bo", role="buyer")
    async with app.run_test(size=(140, 40)) as pilot, cancel_on_error(partner):
        seller = envs.make_policy("car-dealer", "behaviour")
        session = PlaySession(store, "car-dealer", agent=seller, partner=partner,
                              player="bo", seed=1, options={"max_texts": 2})  # fmt: skip
        screen = PlayScreen(session)
        screen.speed_index = 5
        app.push_screen(screen)
        await pilot.pause()
        view = screen.query_one(CarDealerView)
        assert await wait_for_reply_request(pilot, screen, view)
        await reply(pilot, screen, "Hmm, tell me more.")
        assert await wait_for_reply_request(pilot, screen, view)
        assert view.forced and view.query_one("#chat-input").disabled
        await reply(pilot, screen, "more chat")  # refused: the form must answer
        assert view.replying == "buyer"
        view.query_one("#deal-msrp").value = "25000"
        view.query_one("#deal-reject").press()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.session.done and screen.session.success is False
        assert "No sale" in str(view.render_transcript())
    steps = store.steps(store.recent_episodes(1)[0]["id"])
    assert steps[-1]["info"]["forced"] and steps[-1]["info"]["decision"]["msrp"] == 25000
    assert steps[-1]["observation"] == "Hmm, tell me more.\n"


async def test_person_as_seller_sells_to_the_persona_buyer(store):
    seed = 4
    lines = [t.action.strip() for t in envs.run_episode(
        envs.make("car-dealer"), envs.make_policy("car-dealer", "strong"), seed).transitions]  # fmt: skip
    app = make_app(store, player="cy")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("car-dealer", None, None, seed, "cy")
        await pilot.pause()
        view = screen.query_one(CarDealerView)
        assert not view.query_one("#chat-secret").display  # the persona is hidden from the seller
        assert not view.query_one("#deal-row").display
        await type_line(pilot, screen, "")  # explained, not a move
        assert screen.session.transitions == []
        for line in lines:
            await type_line(pilot, screen, line)
        assert screen.session.done and screen.session.success
        assert view.query_one("#chat-secret").display  # revealed at the end
        assert "Sold for" in str(view.render_transcript())
    ep = store.recent_episodes(1)[0]
    assert (ep["agent_kind"], ep["partner_kind"], ep["partner_name"]) == ("human", "scripted", "persona-buyer")
    assert [s["typed"] for s in store.steps(ep["id"])] == lines


def test_parse_dollars():
    assert parse_dollars("$32,000", "MSRP") == parse_dollars("32k", "MSRP") == 32000
    for bad in ("", "abc", "0", "-5"):
        try:
            parse_dollars(bad, "MSRP")
        except envs.InvalidInput:
            continue
        raise AssertionError(bad)


def test_car_dealer_screen_snapshot(snap_compare, tmp_path):
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        screen = app.start_session("car-dealer", None, None, 3, "snap")
        await pilot.pause()
        for line in ("Hello! What kind of car are you looking for?", "What's your budget?",
                     "We have a 2023 Subaru Solterra for $45,000."):  # fmt: skip
            screen.query_one("#chat-input").value = line
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)
