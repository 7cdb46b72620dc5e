"""The Car Dealer play view, driven with Textual's Pilot: a person as the buyer or the seller."""

from __future__ import annotations

import contextlib

from support.app_support import spy_notifications, wait_for
from textual.widgets import OptionList

import envs
from data.session import PlaySession
from envs.car_dealer.text import find_car
from envs.players.session import HumanAgent
from lmrl_tui.app import make_app
from lmrl_tui.screens.info import SummaryScreen
from lmrl_tui.screens.play import PlayScreen
from lmrl_tui.views.car_dealer import CarDealerView, lot_matches, offer_label


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


def offer_labels(view) -> list[str]:
    box = view.query_one("#deal-offers", OptionList)
    return [str(box.get_option_at_index(i).prompt) for i in range(box.option_count)]


async def test_person_as_buyer_closes_a_deal_with_the_strong_seller(store):
    app = make_app(store, player="ann")
    partner = HumanAgent("ann")
    seen = spy_notifications(app)
    async with app.run_test(size=(140, 40)) as pilot, cancel_on_error(partner):
        seller = envs.make_policy("car-dealer", "strong")
        screen = app.start_session("car-dealer", seller, partner, 4, "ann")
        screen.speed_index = 5
        await pilot.pause()
        view = screen.query_one(CarDealerView)
        persona = screen.session.task.state()["persona"]
        # The buyer's panel: persona, budget and wanted features; never the seller's lot.
        panel = view.query_one("#cd-persona")
        text = str(panel.render())
        assert panel.display and "You are the buyer" in text and f"${persona['budget']:,}" in text
        assert all(f in text for f in persona["preferred_features"])
        assert not view.query_one("#cd-lot-box").display
        assert not view.query("#deal-msrp") and not view.query("#deal-price")  # no MSRP to type
        assert await wait_for_reply_request(pilot, screen, view)
        assert "What kind of car" in view.pending
        form = view.query_one("#deal-form")
        assert form.display and not form.has_class("-idle")
        assert offer_labels(view) == ["No price named yet"]
        # Accepting with no price on the table is explained; the typed line is kept.
        view.query_one("#chat-input").value = "Sure, I'll buy something."
        view.query_one("#deal-accept").press()
        await pilot.pause()
        assert view.replying == "buyer" and seen[-1][0].startswith("No price is on the table yet")
        assert view.query_one("#chat-input").value == "Sure, I'll buy something."
        # Nothing typed: explained, no reply sent.
        view.query_one("#chat-input").value = "   "
        await pilot.press("enter")
        await pilot.pause()
        assert view.replying == "buyer"
        await reply(
            pilot, screen, "I'd like a Toyota SUV with a sunroof and heated seats. Budget $30,000."
        )
        if view.replying is None:  # the seller talks: the form keeps its place, dimmed
            assert form.display and form.has_class("-idle")
        while await wait_for_reply_request(pilot, screen, view):
            if view.offers:
                break
            await reply(pilot, screen, "Go on.")
        offer = view.offers[0]
        car = find_car(offer["car"])
        assert offer["by"] == "seller" and car.brand == "Toyota" and "SUV" in car.types
        assert offer_labels(view)[0] == f"{offer['car']} at ${offer['price']:,} (seller)"
        assert view.query_one("#deal-offers").highlighted == 0  # the newest offer is picked
        # A chat line over the limit is explained, and nothing is lost.
        view.query_one("#chat-input").value = "x" * 600
        view.query_one("#deal-accept").press()
        await pilot.pause()
        assert view.replying == "buyer" and "too long" in seen[-1][0]
        assert view.query_one("#chat-input").value == "x" * 600
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
    # The MSRP is the car's list price, the price the offer's: nothing typed.
    assert steps[-1]["info"]["decision"] == {
        "car_bought": True,
        "msrp": car.price,
        "buy_price": offer["price"],
    }
    # The recorded partner replies replay the episode exactly.
    replies = [r for s in steps for r in s["info"]["partner_replies"]]
    again = envs.replay(
        envs.make("car-dealer", partner_replies=replies), ep["seed"], [s["action"] for s in steps]
    )
    assert [(t.observation, t.reward) for t in again.transitions] == [
        (s["observation"], s["reward"]) for s in steps
    ]


async def test_person_as_buyer_asking_for_a_tesla_is_offered_one_and_may_walk_away(store):
    app = make_app(store, player="di")
    partner = HumanAgent("di", role="buyer")
    async with app.run_test(size=(140, 40)) as pilot, cancel_on_error(partner):
        seller = envs.make_policy("car-dealer", "behaviour")
        screen = app.start_session("car-dealer", seller, partner, 7, "di")
        screen.speed_index = 5
        await pilot.pause()
        view = screen.query_one(CarDealerView)
        assert await wait_for_reply_request(pilot, screen, view)
        await reply(pilot, screen, "I want a Tesla.")
        while await wait_for_reply_request(pilot, screen, view):
            if view.offers:
                break
            await reply(pilot, screen, "My budget is $50,000.")
        assert (
            find_car(view.pending).brand == "Tesla"
            and find_car(view.offers[0]["car"]).brand == "Tesla"
        )
        view.query_one("#chat-input").value = "Too pricey for me."
        view.query_one("#deal-reject").press()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.session.done and screen.session.success is False
        assert "No sale" in str(view.render_transcript())
        summary = app.screen  # a walk-away is no "failure": the summary says what happened
        assert isinstance(summary, SummaryScreen)
        result = next(line for line in summary.lines if line.startswith("Result:"))
        assert "No sale: the buyer walked away" in result and "failure" not in result
    steps = store.steps(store.recent_episodes(1)[0]["id"])
    assert steps[-1]["info"]["decision"]["msrp"] == find_car(view.offers[0]["car"]).price
    assert steps[-1]["observation"] == "Too pricey for me. \n"
    assert steps[0]["info"]["partner"]["typed"] == "I want a Tesla."  # as typed, no newline added


async def test_person_as_buyer_must_decide_when_the_talk_is_forced_to_end(store):
    app = make_app(store, player="bo")
    partner = HumanAgent("bo", role="buyer")
    async with app.run_test(size=(140, 40)) as pilot, cancel_on_error(partner):
        seller = envs.make_policy("car-dealer", "behaviour")
        session = PlaySession(
            store,
            "car-dealer",
            agent=seller,
            partner=partner,
            player="bo",
            seed=1,
            options={"max_texts": 2},
        )
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
        expected = view.offers[0]["msrp"] if view.offers else session.task.persona.budget
        view.query_one("#deal-reject").press()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.session.done and screen.session.success is False
        assert "No sale" in str(view.render_transcript())
        summary = app.screen  # a walk-away is no "failure": the summary says what happened
        assert isinstance(summary, SummaryScreen)
        result = next(line for line in summary.lines if line.startswith("Result:"))
        assert "No sale: the buyer walked away" in result and "failure" not in result
    steps = store.steps(store.recent_episodes(1)[0]["id"])
    assert steps[-1]["info"]["forced"] and steps[-1]["info"]["decision"]["msrp"] == expected
    assert steps[-1]["observation"] == "Hmm, tell me more.\n"


async def test_person_as_seller_sells_to_the_persona_buyer(store):
    seed = 4
    lines = [
        t.action.strip()
        for t in envs.run_episode(
            envs.make("car-dealer"), envs.make_policy("car-dealer", "strong"), seed
        ).transitions
    ]
    app = make_app(store, player="cy")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("car-dealer", None, None, seed, "cy")
        await pilot.pause()
        view = screen.query_one(CarDealerView)
        assert not view.query_one("#cd-persona").display  # the persona is hidden from the seller
        assert not view.query_one("#deal-form").display  # the seller decides nothing in a form
        # The seller's panel: the lot with list prices, searchable.
        assert view.query_one("#cd-lot-box").display
        lot = str(view.query_one("#cd-lot-list").render())
        assert "2008 Toyota Solara  $8,500" in lot
        assert "80 of 80 cars" in str(view.query_one("#cd-lot-title").render())
        view.query_one("#cd-search").focus()
        await pilot.press(*"tesla suv")
        await pilot.pause()
        lot = str(view.query_one("#cd-lot-list").render())
        assert "2023 Tesla Model Y" in lot and "2022 Tesla Model X" in lot and "Model 3" not in lot
        assert "2 of 80 cars" in str(view.query_one("#cd-lot-title").render())
        view.query_one("#cd-search").value = "porsche truck"
        await pilot.pause()
        assert "No car matches." in str(view.query_one("#cd-lot-list").render())
        await pilot.press("enter")  # a search is no move
        assert screen.session.transitions == []
        view.query_one("#chat-input").focus()
        await type_line(pilot, screen, "")  # explained, not a move
        assert screen.session.transitions == []
        for line in lines:
            await type_line(pilot, screen, line)
        assert screen.session.done and screen.session.success
        persona = view.query_one("#cd-persona")
        assert persona.display and "The buyer" in str(persona.render())  # revealed at the end
        assert "Sold for" in str(view.render_transcript())
    ep = store.recent_episodes(1)[0]
    assert (ep["agent_kind"], ep["partner_kind"], ep["partner_name"]) == (
        "human",
        "scripted",
        "persona-buyer",
    )
    assert [s["typed"] for s in store.steps(ep["id"])] == lines


def test_lot_search_and_offer_labels():
    assert {c.brand for c in lot_matches("TESLA")} == {"Tesla"}
    assert "2008 Toyota Solara" in {c.name for c in lot_matches("$8,500")}
    assert all("8,500" in f"{c.price:,}" for c in lot_matches("$8,500"))
    assert [c.name for c in lot_matches("toyota convertible")] == ["2008 Toyota Solara"]
    assert len(lot_matches("")) == 80
    assert (
        offer_label({"car": None, "price": 20000, "by": "buyer"})
        == "the car at $20,000 (your offer)"
    )


def test_car_dealer_screen_snapshot(snap_compare, tmp_path):
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        screen = app.start_session("car-dealer", None, None, 3, "snap")
        await pilot.pause()
        for line in (
            "Hello! What kind of car are you looking for?",
            "What's your budget?",
            "We have a 2023 Subaru Solterra for $45,000.",
        ):
            screen.query_one("#chat-input").value = line
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


async def test_the_seller_s_line_awaiting_the_buyer_shows_once(store):
    app = make_app(store, player="ann")
    partner = HumanAgent("ann")
    async with app.run_test(size=(140, 40)) as pilot, cancel_on_error(partner):
        screen = app.start_session(
            "car-dealer", envs.make_policy("car-dealer", "strong"), partner, 5, "ann"
        )
        screen.speed_index = 5
        await pilot.pause()
        view = screen.query_one(CarDealerView)
        for _ in range(2):
            assert await wait_for_reply_request(pilot, screen, view)
            shown = str(view.render_transcript())
            assert view.pending and shown.count(view.pending) == 1, shown
            assert shown.count("(waiting for your answer)") == 1
            await reply(pilot, screen, "Something cheap, please")
        partner.cancel()


async def test_the_chat_shows_the_end_of_the_last_reply(store):
    """A long reply that wraps onto more lines than first measured: the log still ends at it."""
    app = make_app(store, player="ann")
    lines = [
        "Hello, what car do you want and what is your budget?",
        "We have a great Honda SUV with a sunroof and backup camera for $28,000.",
        "I can do $26,500 with leather seats included, final offer.",
    ]
    async with app.run_test(size=(90, 28)) as pilot:
        screen = app.start_session("car-dealer", None, None, 9, "ann")
        await pilot.pause()
        log = screen.view.query_one("#chat-log")
        for line in lines:
            screen.query_one("#chat-input").value = line
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await wait_for(
                pilot, lambda: log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y, line, 10
            )


async def test_the_turn_counts_agree_on_both_sides(store):
    """The chat's "Turn n / 25" and the side panel's "Turn: n / 25" count the same exchanges,
    whether the person is the buyer (a seller's line awaits them: it was one ahead) or the
    seller."""
    app = make_app(store, player="ann")
    partner = HumanAgent("ann")

    def counts(screen) -> tuple[str, str]:
        info = str(screen.view.query_one("#chat-info").render()).split(" · ")[0]
        return info.removeprefix("Turn "), screen._turns().removeprefix("Turn: ")

    async with app.run_test(size=(140, 40)) as pilot, cancel_on_error(partner):
        screen = app.start_session(
            "car-dealer", envs.make_policy("car-dealer", "strong"), partner, 4, "ann"
        )
        screen.speed_index = 5
        await pilot.pause()
        view = screen.query_one(CarDealerView)
        for n in range(3):
            assert await wait_for_reply_request(pilot, screen, view)
            assert counts(screen) == (f"{n} / 25", f"{n} / 25")
            await reply(pilot, screen, "Something reliable under $20,000, please.")
        partner.cancel()
    app = make_app(store, player="bob")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("car-dealer", None, None, 4, "bob")  # the person sells
        await pilot.pause()
        for n in range(3):
            assert counts(screen) == (f"{n} / 25", f"{n} / 25")
            await type_line(pilot, screen, "Welcome! What are you looking for today?")
            await wait_for(
                pilot,
                lambda n=n: len(screen.session.transitions) == n + 1,
                "the buyer's answer",
                10,
            )
