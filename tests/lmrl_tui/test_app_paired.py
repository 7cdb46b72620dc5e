"""Two people, one episode, two apps on one store (as two browsers of ``lmrl serve`` or two
terminals): each asks for a side of Twenty Questions, they are paired through the store, each
sees their own side, the turns go in order, and the store records every step with who typed it
and how. One who leaves ends it for both, abandoned, every step played kept."""

from __future__ import annotations

from support.app_support import wait_for

from data.store import Store
from lmrl_tui.app import make_app
from lmrl_tui.screens.info import SummaryScreen
from lmrl_tui.screens.paired import PairedPlayScreen
from lmrl_tui.starting import PlayRequest

TQ = "twenty-questions"
OPTIONS = {"secret": "guitar"}


def _apps(db_path):
    ann = make_app(Store(db_path), player="ann",
                   start=PlayRequest(TQ, 7, {}, pair="guesser", options=OPTIONS))  # fmt: skip
    bo = make_app(Store(db_path), player="bo",
                  start=PlayRequest(TQ, None, {}, pair="any", options=OPTIONS))  # fmt: skip
    return ann, bo


async def _type(pilot, text: str) -> None:
    await pilot.press(*text, "enter")


async def _paired(app, pilot) -> PairedPlayScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, PairedPlayScreen), "the paired episode")
    return app.screen


async def test_two_apps_play_twenty_questions_together_and_every_step_says_who(db_path):
    ann, bo = _apps(db_path)
    async with ann.run_test(size=(130, 40)) as pa, bo.run_test(size=(130, 40)) as pb:
        guesser, oracle = await _paired(ann, pa), await _paired(bo, pb)
        assert guesser.session.episode_id == oracle.session.episode_id
        await wait_for(pa, lambda: "with bo" in (guesser.sub_title or ""), "ann's header")
        await wait_for(pb, lambda: "with ann" in (oracle.sub_title or ""), "bo's header")
        for question, answer in (("wood?", "sometimes"), ("Is it a guitar?", "Yes.")):
            await _type(pa, question)
            await wait_for(pb, lambda: oracle.view.replying is not None, "the question at bo's")
            assert question.rstrip("?").lower() in str(oracle.view.pending).lower()
            n = len(guesser.session.transitions)
            await _type(pb, answer)
            await wait_for(pa, lambda n=n: len(guesser.session.transitions) == n + 1, "the step")
        await wait_for(pa, lambda: isinstance(ann.screen, SummaryScreen), "ann's summary")
        await wait_for(pb, lambda: isinstance(bo.screen, SummaryScreen), "bo's summary")
        eid = guesser.session.episode_id
        await pa.press("r")  # play again: both back to the lobby, paired into a new episode
        await pb.press("r")
        await wait_for(pa, lambda: ann.screen is not guesser and isinstance(ann.screen,
                       PairedPlayScreen), "ann's next paired episode")  # fmt: skip
        await wait_for(pb, lambda: bo.screen is not oracle and isinstance(bo.screen,
                       PairedPlayScreen), "bo's next paired episode")  # fmt: skip
        assert ann.screen.session.episode_id == bo.screen.session.episode_id != eid
    store = Store(db_path)
    ep = store.episode(eid)
    assert (ep["status"], ep["success"], ep["player"], ep["partner_kind"], ep["partner_name"]) == (
        "finished", 1, "ann", "human", "bo")  # fmt: skip
    steps = store.steps(eid)
    assert [(s["typed"], s["info"]["via"], s["info"]["by"]) for s in steps] == [
        ("wood?", "typed", "ann"),
        ("Is it a guitar?", "typed", "ann"),
    ]
    assert [(s["info"]["partner"]["typed"], s["info"]["partner"]["via"],
             s["info"]["partner"]["by"]) for s in steps] == [
        ("sometimes", "typed", "bo"), ("Yes.", "typed", "bo")]  # fmt: skip
    assert all(s["think_ms"] is not None and s["info"]["partner"]["think_ms"] >= 0 for s in steps)


async def test_one_who_leaves_ends_the_paired_episode_for_both(db_path):
    ann, bo = _apps(db_path)
    async with ann.run_test(size=(130, 40)) as pa, bo.run_test(size=(130, 40)) as pb:
        guesser, oracle = await _paired(ann, pa), await _paired(bo, pb)
        await _type(pa, "Is it alive?")
        await wait_for(pb, lambda: oracle.view.replying is not None, "the question at bo's")
        await _type(pb, "No.")
        await wait_for(pa, lambda: len(guesser.session.transitions) == 1, "the first step")
        await pb.press("escape")
        await pb.press("l")  # leave: it ends for both
        await wait_for(pb, lambda: not isinstance(bo.screen, PairedPlayScreen), "bo has left")
        await wait_for(pa, lambda: not isinstance(ann.screen, PairedPlayScreen), "ann is told")
        eid = guesser.session.episode_id
    store = Store(db_path)
    assert store.episode(eid)["status"] == "abandoned"
    assert [s["info"]["partner"]["typed"] for s in store.steps(eid)] == ["No."]


DUO = """
[[assignment]]
id = "duo"
task = "twenty-questions"
pairing = true
pair_wait = 0.5
options = { secret = "guitar" }
episodes = 2
per_person = 1
"""


async def test_a_campaign_s_pairing_falls_back_to_the_built_in_side_after_its_wait(
    db_path, tmp_path, monkeypatch
):
    from lmrl_tui.cli.serve import serve_campaign
    from lmrl_tui.screens.play import PlayScreen
    from lmrl_tui.screens.player import PlayerPrompt

    (tmp_path / "duo.toml").write_text(DUO, encoding="utf-8")
    store = Store(db_path)
    serve_campaign(str(tmp_path / "duo.toml"), store)
    monkeypatch.setenv("LMRL_ASK_PLAYER", "1")
    monkeypatch.setenv("LMRL_CAMPAIGN", "duo")
    app = make_app(Store(db_path))
    async with app.run_test(size=(130, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, PlayerPrompt), "the name prompt")
        await pilot.press(*"ann", "enter")
        # the lobby waits pair_wait (0.5 s) and may come and go between two looks on a loaded
        # machine: the store says it was asked for (below)
        await wait_for(pilot, lambda: type(app.screen) is PlayScreen, "the built-in oracle")
        await _type(pilot, "Is it alive?")
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.session.transitions) == 1, "the step")
        eid = screen.session.episode_id
    ep = store.episode(eid)
    assert (ep["campaign"], ep["assignment"], ep["player"], ep["agent_kind"]) == (
        "duo", "duo", "ann", "human")  # fmt: skip
    assert ep["partner_kind"] != "human"  # nobody came: the task's own oracle answered
    lobby = list(store.db.query("SELECT player, partner_player, status FROM pairings"))
    assert lobby == [{"player": "ann", "partner_player": None, "status": "cancelled"}]
    assert store.execute("SELECT status FROM pairings").fetchall() == [("cancelled",)]
