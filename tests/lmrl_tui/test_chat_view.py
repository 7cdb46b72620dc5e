"""The chat play view for the question tasks, driven with Textual's Pilot, plus a snapshot."""

from __future__ import annotations

import envs
from envs.players.session import HumanAgent
from envs.questions.guess_city.partner import answer as city_answer
from envs.questions.twenty_questions.partner import answer as tq_answer
from lmrl_tui.app import make_app
from lmrl_tui.views.chat import ChatView
from lmrl_tui.views.transcript import chat_lines, secret_lines


async def ask(pilot, screen, text: str) -> None:
    view = screen.query_one(ChatView)
    inp = view.query_one("#chat-input")
    inp.value = text
    await pilot.press("enter")
    await screen.app.workers.wait_for_complete()
    await pilot.pause()


async def test_person_guesses_the_object_against_the_embedded_oracle(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("twenty-questions", None, None, 5, "ann")
        await pilot.pause()
        view = screen.query_one(ChatView)
        secret = screen.session.task.state()["secret"]["name"]
        assert not view.query_one("#chat-secret").display  # hidden from the guesser
        assert not view.query_one("#chat-input").disabled
        await ask(pilot, screen, "")  # nothing typed: explained, not a question
        assert screen.session.transitions == []
        await ask(pilot, screen, "is it alive")
        await ask(pilot, screen, "xyzzy plugh")
        assert [t.step.reward for t in screen.session.transitions] == [-1.0, -1.0]
        assert "not understood" in str(view.render_transcript())
        assert "Is it alive?" in str(view.render_transcript())
        await ask(pilot, screen, f"Is it a {secret}?")
        assert screen.session.done and screen.session.success
        assert view.query_one("#chat-secret").display
        assert f"Guessed it: {secret}!" in str(view.render_transcript())
    ep = store.recent_episodes(1)[0]
    assert ep["task"] == "twenty-questions" and ep["player"] == "ann" and ep["success"] == 1
    assert ep["agent_kind"] == "human" and ep["partner_kind"] == "scripted"
    assert ep["partner_name"] == "oracle" and ep["return"] == -2.0
    steps = store.steps(ep["id"])
    assert [s["typed"] for s in steps][:2] == ["is it alive", "xyzzy plugh"]
    assert steps[0]["action"] == "Is it alive?\n" and steps[1]["info"]["understood"] is False


async def test_person_plays_the_oracle_against_the_scripted_asker(store):
    app = make_app(store, player="bob")
    async with app.run_test(size=(140, 40)) as pilot:
        agent = envs.make_policy("twenty-questions", "strong")
        partner = HumanAgent("bob", role="oracle")
        screen = app.start_session("twenty-questions", agent, partner, 9, "bob")
        screen.speed_index = 5
        await pilot.pause()
        view = screen.query_one(ChatView)
        task = screen.session.task
        secret = task.state()["secret"]["name"]
        assert view.query_one("#chat-secret").display and secret in str(
            view.query_one("#chat-secret").render()
        )
        for _ in range(40):
            for _ in range(50):
                await pilot.pause(0.02)
                if view.replying is not None or screen.session.done:
                    break
            if screen.session.done:
                break
            assert view.query_one("#chat-yes").display
            truthful = tq_answer(view.pending, task.secret).text
            await pilot.press(
                "y" if truthful == "Yes." else "n", "enter"
            )  # the reply line has the focus
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.session.done and screen.session.success
    ep = store.recent_episodes(1)[0]
    assert (ep["agent_kind"], ep["agent_name"]) == ("scripted", "strong")
    assert (ep["partner_kind"], ep["partner_name"], ep["player"]) == ("human", "bob", "bob")
    assert ep["source"] == "human" and ep["success"] == 1
    steps = store.steps(ep["id"])
    assert all(s["info"]["answer_source"] == "partner" for s in steps)
    assert steps[0]["info"]["partner"]["typed"] in ("y", "n")
    assert steps[0]["info"]["partner"]["via"] == "typed"
    # The recorded replies replay the episode exactly.
    again = envs.replay(
        envs.make("twenty-questions"),
        ep["seed"],
        [s["action"] for s in steps],
        {"partner_replies": [s["info"]["reply"] for s in steps]},
    )
    assert [t.observation for t in again.transitions] == [s["observation"] for s in steps]


async def test_person_answers_open_questions_as_the_city_oracle(store):
    app = make_app(store, player="cy")
    async with app.run_test(size=(140, 40)) as pilot:
        agent = envs.make_policy("guess-city", "strong")
        partner = HumanAgent("cy", role="oracle")
        screen = app.start_session("guess-city", agent, partner, 2, "cy")
        screen.speed_index = 5
        await pilot.pause()
        view = screen.query_one(ChatView)
        task = screen.session.task
        for _ in range(30):
            for _ in range(50):
                await pilot.pause(0.02)
                if view.replying is not None or screen.session.done:
                    break
            if screen.session.done:
                break
            inp = view.query_one("#chat-input")
            assert not inp.disabled
            inp.value = city_answer(view.pending, task.secret).text
            await pilot.press("enter")
        await app.workers.wait_for_complete()
        assert screen.session.done and screen.session.success
    ep = store.recent_episodes(1)[0]
    assert ep["partner_kind"] == "human" and ep["success"] == 1


def test_chat_helpers_handle_role_text_transcripts():
    state = {
        "transcript": [
            {"role": "seller", "text": "Hi!", "visible": "Hi!"},
            {"role": "buyer", "text": "Hello Output: x", "visible": "Hello"},
        ],
        "secret": ["persona_line"],
        "persona_line": "You are thrifty.",
        "to_act": "seller",
    }
    assert chat_lines(state, ("seller", "buyer")) == [("seller", "Hi!", ""), ("buyer", "Hello", "")]
    assert secret_lines(state) == ["persona line: You are thrifty."]


def test_chat_screen_snapshot(snap_compare, tmp_path):
    app = make_app(tmp_path / "snap.db", player="snap")

    async def run_before(pilot):
        screen = app.start_session("guess-city", None, None, 3, "snap")
        await pilot.pause()
        for q in ("What continent is it in?", "Is it on the coast?", "What is the weather like?"):
            screen.query_one("#chat-input").value = q
            await pilot.press("enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.press(*"Is it")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


async def test_person_guessing_sees_the_searchable_list_and_unlisted_guesses_are_wrong(store):
    app = make_app(store, player="dee")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("twenty-questions", None, None, 4, "dee")
        await pilot.pause()
        view = screen.query_one(ChatView)
        task = screen.session.task
        panel = view.query_one("#chat-list")
        assert panel.display  # a person guesses: the list is shown
        names = str(view.query_one("#chat-list-names").render())
        assert all(n in names for n in task.guessable()) and len(task.guessable()) > 100
        view.query_one("#chat-filter").value = "ball"
        await pilot.pause()
        shown = str(view.query_one("#chat-list-names").render()).splitlines()
        assert shown and all("ball" in n.lower() for n in shown) and "Basketball" in shown
        assert "Dog" not in shown
        view.query_one("#chat-filter").value = "zzzz"
        await pilot.pause()
        assert "(no match)" in str(view.query_one("#chat-list-names").render())
        await ask(pilot, screen, "Is it a giraffe?")  # not on the list: a wrong guess
        assert len(screen.session.transitions) == 1  # the search line asked nothing
        step = screen.session.transitions[0].step
        assert step.reward == -1.0 and step.observation == "No.\n"
        assert step.info["guess"] == "giraffe" and step.info["unlisted"] is True
        text = str(view.render_transcript())
        assert "giraffe is not on the list: a wrong guess" in text and "not understood" not in text
    ep = store.recent_episodes(1)[0]
    steps = store.steps(ep["id"])
    assert steps[0]["info"]["unlisted"] is True and steps[0]["info"]["understood"] is True


async def test_the_list_is_hidden_from_a_person_playing_the_oracle_and_offered_for_cities(store):
    app = make_app(store, player="eve")
    async with app.run_test(size=(140, 40)) as pilot:
        agent = envs.make_policy("twenty-questions", "strong")
        screen = app.start_session(
            "twenty-questions", agent, HumanAgent("eve", role="oracle"), 9, "eve"
        )
        await pilot.pause()
        assert not screen.query_one(ChatView).query_one("#chat-list").display
    app = make_app(store, player="eve")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("guess-city", None, None, 1, "eve")
        await pilot.pause()
        view = screen.query_one(ChatView)
        assert view.query_one("#chat-list").display
        view.query_one("#chat-filter").value = "san"
        await pilot.pause()
        shown = str(view.query_one("#chat-list-names").render()).splitlines()
        assert "San Francisco" in shown and "Santiago" in shown and "Tokyo" not in shown


async def test_person_oracle_may_answer_sometimes_which_the_asker_reads_as_no(store):
    app = make_app(store, player="fay")
    async with app.run_test(size=(140, 40)) as pilot:
        agent = envs.make_policy("twenty-questions", "strong")
        partner = HumanAgent("fay", role="oracle")
        screen = app.start_session("twenty-questions", agent, partner, 9, "fay")
        screen.speed_index = 5
        await pilot.pause()
        view = screen.query_one(ChatView)
        for _ in range(100):
            await pilot.pause(0.02)
            if view.replying is not None:
                break
        inp = view.query_one("#chat-input")
        assert not inp.disabled and view.query_one("#chat-yes").display
        inp.focus()
        await pilot.pause()
        inp.value = "purple"  # not an answer: explained, still the person's turn
        await pilot.press("enter")
        await pilot.pause()
        assert view.replying is not None and screen.session.transitions == []
        inp.value = "sometimes"
        await pilot.press("enter")
        for _ in range(100):
            await pilot.pause(0.02)
            if screen.session.transitions:
                break
        step = screen.session.transitions[0].step
        assert step.observation == "No.\n" and step.info["reply"] == "sometimes"
        assert step.info["normalised"] is True
        assert "reply 'sometimes' read as 'No.'" in str(view.render_transcript())
        assert screen.session.task.history()[2].text == "No.\n"  # what the asker saw


async def test_a_person_guessing_does_not_see_a_secret_given_as_an_option(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = app.start_session("guess-city", None, None, 5, "ann", options={"secret": "Cairo"})
        await pilot.pause()
        assert screen.session.task.state()["secret"]["name"] == "Cairo"
        status = str(screen.query_one("#status").render())
        assert "Guess My City" in status and "Cairo" not in status
