"""Model partners and agents chosen in the app: an OpenAI-compatible endpoint (a local fake server)."""

from __future__ import annotations

import json

import pytest

from envs.players.agents import AgentChoiceError, make_agent
from envs.players.remote import ChatEndpointAgent
from lmrl_tui.app import make_app
from lmrl_tui.screens.play import PlayScreen


@pytest.fixture
def server(server):
    """The conftest's fake endpoint, answering "Yes." to everything."""
    server.default = (200, {"choices": [{"message": {"content": "Yes."}}]})
    return server


def test_model_choices_parse():
    a = make_agent("twenty-questions", "http:tiny@http://127.0.0.1:9/v1", role="oracle")
    assert isinstance(a, ChatEndpointAgent) and a.kind == "http"
    for bad in ("http:@http://x", "hf:", "nonsense"):
        with pytest.raises(AgentChoiceError):
            make_agent("twenty-questions", bad)


async def test_human_guesser_against_an_endpoint_oracle(store, server):
    app = make_app(store, player="eve")
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        app.new_episode("twenty-questions", seed=3)
        await pilot.pause()
        app.screen.query_one("#partner-model").value = f"http:tiny@{server.url}"
        await pilot.click("#start")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        screen.query_one("#chat-input").focus()
        await pilot.press(*"Is it alive?", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(screen.session.transitions) == 1
    ep = store.recent_episodes(1)[0]
    host = server.url.split("//")[1].split("/")[0]
    assert (ep["agent_kind"], ep["partner_kind"], ep["partner_name"], ep["player"]) == (
        "human",
        "http",
        f"tiny@{host}",
        "eve",
    )
    (step,) = store.steps(ep["id"])
    assert step["action"] == "Is it alive?\n" and step["observation"] == "Yes.\n"
    assert server.requests, "the endpoint was asked"


def test_generate_with_an_endpoint_partner(tmp_path, server, capsys):
    from lmrl_tui.cli import main

    db = tmp_path / "e.db"
    assert (
        main(
            [
                "--db",
                str(db),
                "generate",
                "twenty-questions",
                "--episodes",
                "2",
                "--policy",
                "behaviour",
                "--partner",
                f"http:tiny@{server.url}",
                "--quiet",
            ]
        )
        == 0
    )
    from data.store import Store

    s = Store(db)
    eps = s.recent_episodes(5)
    assert len(eps) == 2 and all(e["partner_kind"] == "http" for e in eps)
    assert all(st["observation"] == "Yes.\n" for e in eps for st in s.steps(e["id"]))
    s.close()
    assert (
        main(["--db", str(db), "generate", "maze-fo", "--partner", f"http:tiny@{server.url}"]) == 1
    )
    assert "has no partner side" in capsys.readouterr().err


class _OptionsAgent:
    """An agent that says, like a checkpoint does, which task options it learnt."""

    kind = "checkpoint"
    name = "small-words"
    meta = {"task": "wordle", "task_options": {"words": "small"}}

    def reset(self, task, seed=None):
        self.task = task

    def act(self, history):
        return "a b o u t\n"


async def test_a_checkpoint_plays_the_game_it_learnt_and_play_again_keeps_it(store):
    app = make_app(store, player="eve")
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        screen = app.start_session("wordle", _OptionsAgent(), None, 5, None)
        await pilot.pause()
        assert screen.session.task.vocab.size == 400 and screen.session.options == {
            "words": "small"
        }
        app.restart_session(screen.session, 6)
        await pilot.pause()
        assert app.screen.session.task.vocab.size == 400
        human = app.start_session("wordle", None, None, 5, "eve")
        await pilot.pause()
        assert human.session.task.vocab.size > 400  # a person plays the standard game


async def test_task_options_from_the_new_episode_dialog(store):
    """A person picks words=small in the dialog: the game and its log use it; bad text is explained."""
    app = make_app(store, player="eve")
    async with app.run_test(size=(140, 44)) as pilot:
        await app.workers.wait_for_complete()
        app.new_episode("wordle", seed=4)
        await pilot.pause()
        dialog = app.screen
        dialog.query_one("#opt-max_guesses").value = "six"
        await pilot.click("#start")
        await pilot.pause()
        assert app.screen is dialog and "whole number" in str(
            dialog.query_one("#opt-max_guesses-error").render()
        )
        dialog.query_one("#opt-max_guesses").value = ""
        dialog.query_one("#opt-words").value = "small"
        dialog.query_one("#player").focus()
        await pilot.press("enter")  # the last field (the player's name) starts
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PlayScreen) and screen.session.task.vocab.size == 400
        assert "Wordle (words=small)" in str(screen.query_one("#status").render())
        await pilot.press(*"about", "enter")
        await pilot.pause()
        assert len(screen.session.transitions) == 1
        await pilot.press("escape", "enter")  # leave (asked: it has a step)
        await pilot.pause()
        app.new_episode("wordle", seed=4)
        await pilot.pause()
        dialog = app.screen
        dialog.query_one("#opt-bad_word_reward").value = "a lot"
        await pilot.click("#start")
        await pilot.pause()
        assert app.screen is dialog  # said under the field, with what it takes
        assert "bad_word_reward must be a number" in str(
            dialog.query_one("#opt-bad_word_reward-error").render()
        )
    (ep,) = [e for e in store.recent_episodes(5) if e["task"] == "wordle"]
    opts = ep["options"] if isinstance(ep["options"], dict) else json.loads(ep["options"])
    assert opts["words"] == "small" and opts["max_guesses"] == 6 and ep["seed"] == 4


async def _ask_twice_the_second_time_failing(app, pilot, server) -> list[tuple[str, str]]:
    """A person asks the endpoint oracle two questions; it answers the first, fails on the second
    (HTTP 401). Returns the toasts shown (message, title)."""
    seen: list[tuple[str, str]] = []
    real_notify = app.notify

    def notify(message, *, title="", **kw):
        seen.append((message, title))
        return real_notify(message, title=title, **kw)

    app.notify = notify
    app.new_episode("twenty-questions", seed=3)
    await pilot.pause()
    app.screen.query_one("#partner-model").value = f"http:tiny@{server.url}"
    await pilot.click("#start")
    await app.workers.wait_for_complete()
    await pilot.pause()
    app.screen.query_one("#chat-input").focus()
    for question, answers in (("Is it alive?", []), ("Is it big?", [(401, {"error": "bad key"})])):
        server.script = answers
        await pilot.press(*question, "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
    return seen


async def test_an_endpoint_failure_in_play_is_a_toast_and_the_episode_keeps_its_steps(
    store, server
):
    app = make_app(store, player="eve")
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        seen = await _ask_twice_the_second_time_failing(app, pilot, server)
        (message, title) = seen[-1]
        assert (
            title == "The step failed"
            and message.startswith("EndpointError: ")
            and "HTTP 401" in message
        )
        assert "\n" not in message and isinstance(app.screen, PlayScreen)
        assert len(app.screen.session.transitions) == 1
        ep = store.recent_episodes(1)[0]
        assert ep["status"] == "in_progress" and len(store.steps(ep["id"])) == 1


async def test_after_an_endpoint_failure_the_person_can_ask_again(store, server):
    app = make_app(store, player="eve")
    async with app.run_test(size=(140, 40)) as pilot:
        await app.workers.wait_for_complete()
        await _ask_twice_the_second_time_failing(app, pilot, server)
        await pilot.press(*"Is it big?", "enter")  # the endpoint is back
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(app.screen.session.transitions) == 2
