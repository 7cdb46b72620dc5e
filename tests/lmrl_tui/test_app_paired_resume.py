"""A paired episode whose two apps were both killed goes on with the same two people, each on
their side again: each new app offers it to its person, the first to resume it waits for the
other ("Waiting for bo to come back to episode N …"), and once both are back they play it to the
end, every step recorded with who typed it. Nobody else is offered it; one who waits in vain
leaves it for later or marks it abandoned. Each app is a real app on its own connection to one
SQLite file; its process is a stand-in that is killed (support/app_processes.py), and the apps'
own way out (which would end the episode for both) does not run, as with ``kill -9``."""

from __future__ import annotations

from support.app_processes import stand_ins
from support.app_support import settle, spy_notifications, wait_for

from data.store import Store
from envs.players.human import HumanAgent
from lmrl_tui.app import make_app
from lmrl_tui.screens.home import HomeScreen
from lmrl_tui.screens.info import SummaryScreen
from lmrl_tui.screens.leave import UnfinishedDialog
from lmrl_tui.screens.paired import PairedPlayScreen
from lmrl_tui.screens.paired_resume import ComeBackScreen, NotBackDialog
from lmrl_tui.starting import PlayRequest

TQ = "twenty-questions"
OPTIONS = {"secret": "guitar"}
SIZE = (130, 40)
DUO = """
[[assignment]]
id = "duo"
task = "twenty-questions"
pairing = true
pair_wait = 0.5
options = { secret = "guitar" }
episodes = 2
per_person = 2
"""


async def _type(pilot, text: str) -> None:
    await pilot.press(*text, "enter")


async def _paired(app, pilot) -> PairedPlayScreen:
    await wait_for(pilot, lambda: isinstance(app.screen, PairedPlayScreen), "the paired episode")
    return app.screen


async def _turn(pa, pb, guesser, oracle, question: str, answer: str) -> None:
    n = len(guesser.session.transitions)
    await _type(pa, question)
    await wait_for(pb, lambda: oracle.view.replying is not None, "the question at bo's")
    await _type(pb, answer)
    await wait_for(pa, lambda: len(guesser.session.transitions) == n + 1, "the step")


def _as_if_killed(*screens: PairedPlayScreen) -> None:
    """The apps are about to be killed: their screens' way out (which would end the episode for
    both, marked abandoned) never runs, and their waiting threads stop without a word."""
    for screen in screens:
        s = screen.session

        def stop(s=s) -> None:
            if hasattr(s, "remote"):
                s.remote.stop.set()
            if isinstance(s.partner, HumanAgent):
                s.partner.cancel()

        s.abandon = s.suspend = stop
        s.partner_gone = lambda: None


async def _played_then_both_killed(db_path, make, turns, campaign=None) -> int:
    """ann (guesser) and bo (oracle) pair and play ``turns``; then both apps are killed."""
    ann_proc, bo_proc = make("ann"), make("bo")
    ann = make_app(Store(db_path), player="ann", start=PlayRequest(
        TQ, 7, {}, pair="guesser", options=OPTIONS, campaign=campaign))  # fmt: skip
    bo = make_app(Store(db_path), player="bo", start=PlayRequest(
        TQ, None, {}, pair="any", options=OPTIONS, campaign=campaign))  # fmt: skip
    ann.holder, bo.holder = ann_proc.holder, bo_proc.holder
    async with ann.run_test(size=SIZE) as pa, bo.run_test(size=SIZE) as pb:
        guesser, oracle = await _paired(ann, pa), await _paired(bo, pb)
        for question, answer in turns:
            await _turn(pa, pb, guesser, oracle, question, answer)
        eid = guesser.session.episode_id
        _as_if_killed(guesser, oracle)
    ann_proc.kill()
    bo_proc.kill()
    return int(eid)


async def _resume_offered(app, pilot, eid: int) -> None:
    await wait_for(pilot, lambda: isinstance(app.screen, UnfinishedDialog), "the resume offer")
    assert sorted(app.screen.episodes) == [eid]
    assert app.screen.episodes[eid]["paired"]
    await pilot.pause()
    row = app.screen.query_one("#unfinished").get_row(str(eid))
    assert "paired: ann and bo" in row  # the same words in both people's offers
    await pilot.press("enter")  # resume


def _status_text(app) -> str:
    return str(app.screen.query_one("#pairing-status").render())


async def _asked(pilot, store, n: int) -> None:
    """Wait until the store holds ``n`` requests to come back (``waiting``)."""
    sql = "SELECT COUNT(*) FROM pairings WHERE status = 'waiting'"
    await wait_for(pilot, lambda: store.execute(sql).fetchone()[0] == n, f"{n} waiting")


async def test_both_apps_killed_the_two_people_come_back_and_play_on_each_on_their_side(db_path):
    store = Store(db_path)
    with stand_ins() as make:
        eid = await _played_then_both_killed(db_path, make, [("Is it alive?", "No."),
                                                             ("wood?", "sometimes")])  # fmt: skip
        ep = store.episode(eid)
        assert (ep["status"], ep["n_steps"]) == ("in_progress", 2)
        cy = make_app(Store(db_path), player="cy")  # not one of the two: never offered it
        async with cy.run_test(size=SIZE) as pc:
            await settle(cy)
            await pc.pause(0.1)
            assert isinstance(cy.screen, HomeScreen)
            await pc.press("u")
            await settle(cy)
            await pc.pause(0.1)
            assert not isinstance(cy.screen, UnfinishedDialog)
        ann = make_app(Store(db_path), player="ann")
        async with ann.run_test(size=SIZE) as pa:
            await _resume_offered(ann, pa, eid)
            await wait_for(pa, lambda: isinstance(ann.screen, ComeBackScreen), "ann waits")
            await wait_for(pa, lambda: f"Waiting for bo to come back to episode {eid}" in
                           _status_text(ann), "the waiting line")  # fmt: skip
            assert "You play the guesser again" in _status_text(ann)
            await pa.press("escape")  # she stops waiting, then thinks better of it
            await wait_for(pa, lambda: isinstance(ann.screen, NotBackDialog), "what now")
            await pa.press("w")  # keep waiting
            await wait_for(pa, lambda: isinstance(ann.screen, ComeBackScreen), "ann waits again")
            await _asked(pa, store, 1)  # her new request is in the store before bo comes
            assert store.episode(eid)["status"] == "in_progress"
            bo = make_app(Store(db_path), player="bo")
            async with bo.run_test(size=SIZE) as pb:
                await _resume_offered(bo, pb, eid)
                guesser, oracle = await _paired(ann, pa), await _paired(bo, pb)
                assert guesser.session.episode_id == oracle.session.episode_id == eid
                assert len(guesser.session.transitions) == len(oracle.session.transitions) == 2
                assert oracle.session.task.history() == guesser.session.task.history()
                assert guesser.session.pairing.my_side == "guesser"
                assert oracle.session.pairing.my_side == "oracle"
                await wait_for(pa, lambda: "with bo" in (guesser.sub_title or ""), "ann's header")
                await wait_for(pb, lambda: "with ann" in (oracle.sub_title or ""), "bo's header")
                await _turn(pa, pb, guesser, oracle, "Is it a guitar?", "Yes.")
                await wait_for(pa, lambda: isinstance(ann.screen, SummaryScreen), "ann's summary")
                await wait_for(pb, lambda: isinstance(bo.screen, SummaryScreen), "bo's summary")
    ep = store.episode(eid)
    assert (ep["status"], ep["success"], ep["n_steps"], ep["player"], ep["partner_name"]) == (
        "finished", 1, 3, "ann", "bo")  # fmt: skip
    steps = store.steps(eid)
    assert [s["idx"] for s in steps] == [0, 1, 2]
    assert [(s["typed"], s["info"]["via"], s["info"]["by"]) for s in steps] == [
        ("Is it alive?", "typed", "ann"), ("wood?", "typed", "ann"),
        ("Is it a guitar?", "typed", "ann")]  # fmt: skip
    assert [(s["info"]["partner"]["typed"], s["info"]["partner"]["via"],
             s["info"]["partner"]["by"]) for s in steps] == [
        ("No.", "typed", "bo"), ("sometimes", "typed", "bo"), ("Yes.", "typed", "bo")]  # fmt: skip
    rows = store.execute(
        "SELECT status, player, partner_player, episode_id FROM pairings ORDER BY id"
    ).fetchall()
    assert rows == [
        ("ended", "ann", "bo", eid),  # the first pairing, whose apps were killed
        ("cancelled", "ann", None, eid),  # ann stopped waiting
        ("ended", "ann", "bo", eid),  # she waited again, bo came back: played to the end
    ]


async def test_one_who_waits_in_vain_leaves_it_for_later_then_marks_it_abandoned(db_path, tmp_path):
    """In a campaign, the first to come back waits its ``pair_wait`` (0.5 s), then is asked."""
    from lmrl_tui.cli.serve import serve_campaign

    (tmp_path / "duo.toml").write_text(DUO, encoding="utf-8")
    store = Store(db_path)
    serve_campaign(str(tmp_path / "duo.toml"), store)
    with stand_ins() as make:
        eid = await _played_then_both_killed(db_path, make, [("Is it alive?", "No.")],
                                             campaign=("duo", "duo"))  # fmt: skip
        assert store.episode(eid)["campaign"] == "duo"
        bo = make_app(Store(db_path), player="bo")  # bo comes back; ann does not
        async with bo.run_test(size=SIZE) as pb:
            await _resume_offered(bo, pb, eid)
            await wait_for(pb, lambda: isinstance(bo.screen, NotBackDialog), "bo is asked")
            assert "ann has not come back within 0.5 s" in str(
                bo.screen.query_one("#question").render()
            )
            await pb.press("l")  # leave it for later
            await wait_for(pb, lambda: isinstance(bo.screen, HomeScreen), "bo's home screen")
            assert store.episode(eid)["status"] == "in_progress"
            await pb.press("u")  # another try
            await _resume_offered(bo, pb, eid)
            await wait_for(pb, lambda: isinstance(bo.screen, NotBackDialog), "bo is asked again")
            await pb.press("a")  # mark it abandoned
            await wait_for(pb, lambda: isinstance(bo.screen, HomeScreen), "bo's home screen")
    ep = store.episode(eid)
    assert (ep["status"], ep["n_steps"]) == ("abandoned", 1)
    rows = store.execute("SELECT status, player FROM pairings ORDER BY id").fetchall()
    assert rows == [("ended", "ann"), ("cancelled", "bo"), ("cancelled", "bo")]


async def test_one_who_waits_is_told_when_the_other_marks_it_abandoned(db_path):
    store = Store(db_path)
    with stand_ins() as make:
        eid = await _played_then_both_killed(db_path, make, [("Is it alive?", "No.")])
        ann = make_app(Store(db_path), player="ann")
        seen = spy_notifications(ann)
        async with ann.run_test(size=SIZE) as pa:
            await _resume_offered(ann, pa, eid)
            await wait_for(pa, lambda: isinstance(ann.screen, ComeBackScreen), "ann waits")
            await _asked(pa, store, 1)
            bo = make_app(Store(db_path), player="bo")
            async with bo.run_test(size=SIZE) as pb:
                await wait_for(pb, lambda: isinstance(bo.screen, UnfinishedDialog), "bo's offer")
                await pb.press("a")  # bo does not want to go on with it
                await wait_for(pb, lambda: isinstance(bo.screen, HomeScreen), "bo's home screen")
            await wait_for(pa, lambda: isinstance(ann.screen, HomeScreen), "ann is told")
            assert any(f"episode {eid} is abandoned now" in m for m, *_ in seen)
    assert store.episode(eid)["status"] == "abandoned"
    rows = store.execute("SELECT status, player FROM pairings ORDER BY id").fetchall()
    assert rows == [("ended", "ann"), ("cancelled", "ann")]


PAIR = """
[[assignment]]
id = "pair"
task = "twenty-questions"
pairing = true
pair_wait = 60
options = { secret = "guitar" }
episodes = 2
per_person = 2
"""


async def test_a_resumed_paired_campaign_episode_tells_the_person_where_they_stand(
    db_path, tmp_path, monkeypatch
):
    """The header of a paired campaign episode the two come back to says each person's place, as
    a resumed campaign episode played alone does (``your episode 1 of 2 · 1 of 2 in all``), on
    both sides (it said only ``campaign pair · pair``)."""
    from lmrl_tui.cli.serve import serve_campaign

    (tmp_path / "pair.toml").write_text(PAIR, encoding="utf-8")
    store = Store(db_path)
    serve_campaign(str(tmp_path / "pair.toml"), store)
    with stand_ins() as make:
        eid = await _played_then_both_killed(db_path, make, [("Is it alive?", "No.")],
                                             campaign=("pair", "pair"))  # fmt: skip
        monkeypatch.setenv("LMRL_CAMPAIGN", "pair")  # both apps serve the campaign
        ann, bo = make_app(Store(db_path), player="ann"), make_app(Store(db_path), player="bo")
        async with ann.run_test(size=SIZE) as pa:
            await _resume_offered(ann, pa, eid)
            await wait_for(pa, lambda: isinstance(ann.screen, ComeBackScreen), "ann waits")
            await _asked(pa, store, 1)
            async with bo.run_test(size=SIZE) as pb:
                await _resume_offered(bo, pb, eid)
                guesser, oracle = await _paired(ann, pa), await _paired(bo, pb)
                await wait_for(pa, lambda: "with bo" in (guesser.sub_title or ""), "ann's header")
                await wait_for(pb, lambda: "with ann" in (oracle.sub_title or ""), "bo's header")
                place = "campaign pair · pair: your episode 1 of 2 · 1 of 2 in all"
                assert guesser.sub_title == f"episode {eid} · seed 7 · {place} · with bo"
                assert oracle.sub_title == f"episode {eid} · seed 7 · {place} · with ann"
                await _turn(pa, pb, guesser, oracle, "Is it a guitar?", "Yes.")
                await wait_for(pa, lambda: isinstance(ann.screen, SummaryScreen), "ann's summary")
                await wait_for(pb, lambda: isinstance(bo.screen, SummaryScreen), "bo's summary")
    ep = store.episode(eid)
    assert (ep["status"], ep["n_steps"], ep["campaign"], ep["assignment"]) == (
        "finished", 2, "pair", "pair")  # fmt: skip
