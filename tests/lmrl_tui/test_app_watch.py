"""Watching a checkpoint in the app: the value overlay shows the model's own Q and V (worked out
again here from the checkpoint's modules); loading shows at once, thinking once a step takes a while; both can be cancelled."""

from __future__ import annotations

import threading

import pytest

torch = pytest.importorskip("torch")

from rich.console import Console  # noqa: E402
from support.checkpoint_support import tiny_checkpoint  # noqa: E402

import envs  # noqa: E402
from envs.core import history_to_str  # noqa: E402
from envs.players.agents import _LOADERS  # noqa: E402
from envs.players.explanation import ARROWS  # noqa: E402
from envs.players.process_agent import ProcessAgent  # noqa: E402
from lmrl_tui.app import make_app  # noqa: E402
from lmrl_tui.screens.dialogs import NewEpisodeDialog  # noqa: E402
from lmrl_tui.screens.play import THINKING_NOTE_AFTER, PlayScreen  # noqa: E402
from lmrl_tui.views.overlay import ValueOverlay, action_text  # noqa: E402
from training.agents.checkpoint_agent import load_agent  # noqa: E402
from training.model.tokenization import encode  # noqa: E402


@pytest.fixture(scope="module")
def ilql(tmp_path_factory):
    return tiny_checkpoint(tmp_path_factory.mktemp("ckpt"), "ilql")


async def settle(app, pilot) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


def shown_rows(overlay: ValueOverlay) -> dict[str, list[str]]:
    """The overlay's table as text: action -> the cells after it."""
    console = Console(width=60, record=True, color_system=None)
    console.print(overlay.content)
    rows = {}
    for line in console.export_text().splitlines():
        cells = line.split()
        if len(cells) >= 5 and cells[0] == "move":
            rows[f"{cells[0]} {cells[1]}"] = cells[2:]
    return rows


@torch.no_grad()
def model_q_v(agent, prompt: str, action: str) -> tuple[float, float]:
    """ILQL's (Q, V) of ``action``: V at the state, Q = V + Σ_t (min Q̄_t − V_t) over its tokens."""
    tok, m = agent.decoder.tok, agent.decoder.model
    p, a = encode(tok, prompt), encode(tok, action)
    h = m.lm(input_ids=torch.tensor([p + a]), output_hidden_states=True).hidden_states[-1][0]
    h = h[len(p) - 1 : len(p) + len(a) - 1]
    idx = torch.tensor(a)[:, None]
    q = torch.minimum(
        m.target_q_heads[0](h).gather(-1, idx), m.target_q_heads[1](h).gather(-1, idx)
    )[:, 0]
    v = m.v_head(h)[:, 0]
    return float(v[0] + (q - v).sum()), float(v[0])


@pytest.mark.slow
@pytest.mark.parametrize("where", ["here", "own process"])
async def test_the_overlay_shows_the_checkpoints_q_and_v(store, ilql, where):
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        agent = load_agent(ilql)  # the numbers are worked out again from this one's modules
        played = agent if where == "here" else ProcessAgent(str(ilql), "maze-fo").load()
        screen = app.start_session("maze-fo", played, None, 4, None, agent_choice=str(ilql))
        await settle(app, pilot)
        await pilot.press("space")  # one step by the agent, then the overlay on
        await settle(app, pilot)
        await pilot.press("v")
        await settle(app, pilot)
        overlay = screen.query_one("#overlay", ValueOverlay)
        assert overlay.display and overlay.for_step == 1 and overlay.explanation is not None
        rows = shown_rows(overlay)
        task = screen.session.task
        prompt = history_to_str(task.history())
        assert set(rows) == {action_text(a) for a in task.legal_actions()}
        for action in task.legal_actions():
            q, v = model_q_v(agent, prompt, action)
            cells = rows[action_text(action)]
            assert float(cells[0]) == pytest.approx(q, abs=1.5e-3)
            assert float(cells[1]) == pytest.approx(v, abs=1.5e-3)
            assert float(cells[2]) == pytest.approx(q - v, abs=1.5e-3)
        chosen = overlay.explanation.rl_choice
        assert "★" in rows[action_text(chosen)][-1]
        await pilot.press("space")  # the agent plays the marked action; the overlay follows
        await settle(app, pilot)
        assert screen.session.transitions[-1].action == chosen and overlay.for_step == 2
        await pilot.press("v")
        await pilot.pause()
        assert not overlay.display
        await pilot.press("m")  # the policy map: the move it plays from every free cell
        await settle(app, pilot)
        arrows = screen.view.arrows
        probe = envs.make("maze-fo")
        assert arrows and len(arrows) == len(probe.tables.starts)
        for rc, arrow in arrows.items():
            probe.reset(0, options={"init_position": rc})
            agent.reset(probe, 0)
            assert arrow == ARROWS[agent.act(probe.history())], rc
        assert "→" in str(screen.view.query_one("#grid").content) or "←" in str(
            screen.view.query_one("#grid").content
        )
        await pilot.press("m")
        await pilot.pause()
        assert screen.view.arrows is None


async def test_loading_shows_at_once_and_escape_cancels_it(store, tmp_path, monkeypatch):
    release = threading.Event()
    calls = []

    def slow_loader(path, **kw):
        calls.append(path)
        release.wait(10)
        agent = envs.make_policy("maze-fo", "optimal")
        agent.kind = "checkpoint"  # as a loaded checkpoint says of itself
        return agent

    monkeypatch.setitem(_LOADERS, "checkpoint", slow_loader)
    (tmp_path / "ck").mkdir()
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 44)) as pilot:
        app.new_episode("maze-fo", seed=3, checkpoint=str(tmp_path / "ck"))
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, NewEpisodeDialog)
        dialog.query_one("#start").press()
        await pilot.pause()  # the very next frame: the load runs, the note says so
        assert "Loading checkpoint" in str(dialog.query_one("#error").content)
        assert dialog.query_one("#start").disabled
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is dialog and "cancelled" in str(dialog.query_one("#error").content)
        assert not dialog.query_one("#start").disabled
        release.set()  # the cancelled load ends: its agent is dropped
        await settle(app, pilot)
        assert app.screen is dialog and store.count() == 0
        dialog.query_one("#start").press()  # again, and let it finish
        await settle(app, pilot)
        assert isinstance(app.screen, PlayScreen) and len(calls) == 2
        agent = app.screen.session.agent
        app.restart_session(app.screen.session, 4)  # play again: the loaded model plays on
        await settle(app, pilot)
        assert (
            app.screen.session.agent is agent and app.screen.session.seed == 4 and len(calls) == 2
        )
    assert store.count() == 2


class SlowAgent:
    """An agent that thinks until released."""

    kind = "scripted"
    name = "slow"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def reset(self, task, seed=None) -> None:
        pass

    def act(self, history) -> str:
        self.calls += 1
        self.release.wait(10)
        return "move up\n"


async def test_thinking_shows_and_escape_drops_the_move(store):
    app = make_app(store, player="ann")
    async with app.run_test(size=(120, 44)) as pilot:
        agent = SlowAgent()
        screen = app.start_session("maze-fo", agent, None, 3, None)
        await pilot.pause()
        await pilot.press("space")
        await pilot.pause()
        assert screen.thinking and "thinking" not in str(
            screen.query_one("#status").content
        )  # not yet
        await pilot.pause(THINKING_NOTE_AFTER + 0.2)  # a step that takes a while says so
        assert screen.thinking and "thinking" in str(screen.query_one("#status").content)
        await pilot.press("escape")  # cancels the move; the screen stays
        await pilot.pause()
        assert app.screen is screen and not screen.thinking
        agent.release.set()
        await settle(app, pilot)
        assert screen.session.transitions == [] and agent.calls == 1
        await pilot.press("space")  # asked again, it plays
        await settle(app, pilot)
        assert len(screen.session.transitions) == 1
    assert len(store.steps(store.recent_episodes(1)[0]["id"])) == 1


@pytest.mark.slow
@pytest.mark.stockfish
async def test_the_overlay_gives_stockfishs_evaluation_in_chess(store):
    import chess

    from envs.chess.stockfish import Engine, find_stockfish

    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        screen = app.start_session(
            "chess", envs.make_policy("chess", envs.policies("chess")[0]), None, 3, None
        )
        await settle(app, pilot)
        await pilot.press("space")
        await settle(app, pilot)
        await pilot.press("v")
        await settle(app, pilot)
        shown = str(screen.query_one("#overlay", ValueOverlay).content)
        board = chess.Board(screen.session.state()["fen"])
        with Engine(find_stockfish()) as engine:  # the same search, on its own
            mate, cp = engine.mate_in(board, screen.ENGINE_DEPTH)
        assert mate is None and f"{cp / 100:+.2f} (white's view)" in shown, shown


async def test_the_overlay_keeps_its_size_while_the_next_values_compute():
    from textual.app import App

    from envs.players.explanation import Candidate, Explanation

    expl = Explanation(
        "ilql",
        "value",
        [
            Candidate("move up\n", -1.0, -2.0, 1.0, 0.6, 0.5),
            Candidate("move down\n", -3.0, -2.0, -1.0, 0.4, 0.5),
        ],
        "move up\n",
        "move down\n",
        -2.0,
        total=2,
    )

    class One(App):
        def compose(self):
            yield ValueOverlay(id="overlay", classes="-shown")

    app = One()
    async with app.run_test(size=(60, 20)) as pilot:
        overlay = app.query_one(ValueOverlay)
        overlay.show_explanation(expl, 3)
        await pilot.pause()
        before = overlay.size
        overlay.mark_updating()  # the next state's numbers are being computed
        await pilot.pause()
        assert overlay.explanation is expl and overlay.for_step == 3 and overlay.size == before
        assert "dim" in str(overlay.content.style)
        overlay.show_explanation(expl, 4)
        assert not hasattr(overlay.content, "style") or "dim" not in str(overlay.content.style)


async def test_the_last_numbers_dim_only_when_the_next_are_slow_to_come(store, ilql, monkeypatch):
    # at auto-play speed the next numbers come first: dimming the box each step was a full redraw
    app = make_app(store, player="ann")
    async with app.run_test(size=(140, 44)) as pilot:
        screen = app.start_session(
            "maze-fo", load_agent(ilql), None, 4, None, agent_choice=str(ilql)
        )
        await settle(app, pilot)
        await pilot.press("v")
        await settle(app, pilot)
        overlay = screen.query_one("#overlay", ValueOverlay)
        shown = overlay.explanation
        assert shown is not None and "dim" not in str(getattr(overlay.content, "style", ""))
        asked: list[int] = []
        monkeypatch.setattr(screen, "_explain_worker", asked.append)  # the next numbers never come
        monkeypatch.setattr(screen, "DIM_AFTER", 60.0)
        assert screen.request_explanation() and asked == [0]
        await pilot.pause(0.1)
        assert overlay.explanation is shown and "dim" not in str(
            getattr(overlay.content, "style", "")
        )
        screen.post_message(screen.Explained(0, shown, None))  # they come in time: nothing dims
        await pilot.pause(0.1)
        assert screen._dim_timer is None and "dim" not in str(getattr(overlay.content, "style", ""))
        monkeypatch.setattr(screen, "DIM_AFTER", 0.01)
        assert screen.request_explanation()  # and now they are slow
        await pilot.pause(0.3)
        assert overlay.explanation is shown and "dim" in str(overlay.content.style)


@pytest.mark.parametrize("width", [24, 40, 60])
async def test_the_overlay_knows_its_height_without_drawing_it(width, monkeypatch):
    from textual.app import App
    from textual.visual import visualize

    import lmrl_tui.views.overlay as overlay_module
    from envs.players.explanation import Candidate, Explanation

    values = Explanation(
        "ilql",
        "value",
        [
            Candidate("move up\n", -1.0, -2.0, 1.0, 0.6, 0.5),
            Candidate("a very long utterance of a seller " * 3, -3.0, -2.0, -1.0, 0.4, 0.5),
        ],
        "move up\n",
        "move down\n",
        -2.0,
        total=2,
    )
    policy = Explanation(
        "bc",
        "policy",
        [Candidate(f"Q {i}\n", None, None, None, 0.1, 0.1) for i in range(5)],
        "Q 0\n",
        "Q 1\n",
        None,
        total=30,
        source="legal actions",
    )
    guided = Explanation(
        "guided",
        "value",
        values.candidates,
        "move up\n",
        "move up\n",
        None,
        total=2,
        notes=[
            "critique",
            "1. move up -> the secret is found: 41% (+6); the questions run out: 59%",
            "2. a very long line " * 4,
        ],
    )
    measured: list[tuple[int, int]] = []
    real = overlay_module.update_static

    def record(widget, content, height=None):
        visual = visualize(widget, content, markup=False)
        if height is not None:  # not for a note
            measured.append(
                (
                    height(widget.content_size.width),
                    visual.get_height(widget.styles, widget.content_size.width),
                )
            )
        real(widget, content, height)

    class One(App):
        CSS = f"ValueOverlay {{ width: {width}; height: auto; }}"

        def compose(self):
            yield ValueOverlay(id="overlay", classes="-shown")

    monkeypatch.setattr(overlay_module, "update_static", record)
    async with One().run_test(size=(80, 40)) as pilot:
        overlay = pilot.app.query_one(ValueOverlay)
        overlay.show_note("computing values …")
        await pilot.pause()
        for expl, engine in (
            (values, None),
            (policy, "Stockfish (depth 12): +0.35 (white's view)"),
            (guided, None),
        ):
            for updating in (False, True):
                overlay.show_explanation(expl, 1, engine, updating=updating)
                await pilot.pause()
    assert len(measured) == 6 and all(ours == textuals for ours, textuals in measured), measured
