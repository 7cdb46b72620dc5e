"""Learning the other side of a dialogue (``lmrl train bc --side partner``): every recorded partner
reply becomes a window (the partner's view, replayed; the reply), selected by who played that side;
the checkpoint then plays that side (``lmrl generate --partner PATH``)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import envs  # noqa: E402
from data.datasets import DatasetQuery, load_episodes, select_episode_ids  # noqa: E402
from data.generate import generate  # noqa: E402
from data.store import Store  # noqa: E402
from envs.core import history_to_str  # noqa: E402
from lmrl_tui.cli import main  # noqa: E402
from training.config import TrainConfig, resolve  # noqa: E402
from training.datasets.partner_side import partner_views, partner_windows  # noqa: E402
from training.errors import TrainingError  # noqa: E402


class YesOracle:
    """An outside oracle (a stand-in for a person or a model): answers from its view."""

    kind = "scripted"
    name = "yes-oracle"

    def reset(self, task, seed=None) -> None:
        pass

    def act(self, history) -> str:
        return "Yes." if len(history[-1].text) % 2 else "No."


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    folder = tmp_path_factory.mktemp("side")
    store = Store(folder / "side.db")
    generate(store, "car-dealer", envs.make_policy("car-dealer", "behaviour"), 12, seed=100)
    generate(
        store,
        "twenty-questions",
        envs.make_policy("twenty-questions", "behaviour"),
        4,
        seed=200,
        partner=YesOracle(),
    )
    generate(
        store, "twenty-questions", envs.make_policy("twenty-questions", "behaviour"), 3, seed=300
    )
    yield folder, store
    store.close()


def test_each_buyer_reply_is_a_window_on_the_buyers_view(stores):
    _, store = stores
    ids = select_episode_ids(store, DatasetQuery(task="car-dealer"))
    ep = next(iter(load_episodes(store, ids[:1])))
    views = partner_views(ep.episode, ep.steps)
    assert len(views) >= len(ep.steps)  # one reply a step (two when the decision was forced)
    task = envs.make("car-dealer")
    task.reset(ep.episode["seed"])
    assert (
        views[0][0]
        == history_to_str(task.buyer_history()[:2]) + ep.steps[0]["action"].strip() + "\n"
    )
    assert views[0][0].startswith("Start\nPersonality: ")  # the buyer sees its persona
    assert ep.steps[0]["observation"].strip() in views[0][1]
    wins, skipped = partner_windows(store, ids)
    assert skipped == 0 and wins[0].segments == [
        (views[0][0], False, 0.0),
        (views[0][1], True, 0.0),
    ]
    assert wins[0].next_prompt == wins[1].segments[0][0]


def test_question_episodes_give_the_outside_oracles_answers_only(stores):
    _, store = stores
    ids = select_episode_ids(
        store, DatasetQuery(task="twenty-questions", partner_kinds=["scripted"])
    )
    assert len(ids) == 7
    wins, skipped = partner_windows(store, ids)
    assert skipped == 3 and wins  # the embedded oracle's answers are not recorded: left out
    assert {w.episode for w in wins} == set(ids[:4])
    for w in wins:
        view, reply = w.segments[0][0], w.segments[1][0]
        assert reply in ("Yes.\n", "No.\n") and view.strip()  # the oracle's prompt, its answer
    none, skipped = partner_windows(store, ids[4:])
    assert none == [] and skipped == 3


def test_partner_side_is_behaviour_cloning_on_a_task_with_a_partner(tmp_path):
    from training.offline.loop import train

    with pytest.raises(ValueError, match="lmrl train bc --side partner"):
        resolve(TrainConfig(algo="mc", task="car-dealer", side="partner"), {"side"})
    store = Store(tmp_path / "embedded.db")
    generate(
        store, "twenty-questions", envs.make_policy("twenty-questions", "behaviour"), 3, seed=300
    )
    generate(store, "maze-fo", envs.make_policy("maze-fo", "behaviour"), 2, seed=300)
    for task, message in (
        ("twenty-questions", "none of the 3 episodes replays"),
        ("maze-fo", "no partner side"),
    ):
        base = dict(
            algo="bc",
            task=task,
            side="partner",
            max_steps=1,
            batch_size=4,
            n_embd=32,
            n_head=2,
            n_layer=1,
            vocab_size=300,
            eval_episodes=0,
            progress=False,
        )
        cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
        with pytest.raises(TrainingError, match=message):
            train(cfg, store, DatasetQuery(task=task), tmp_path / task)
    store.close()


@pytest.mark.slow  # trains a buyer checkpoint, then plays it (~10 s)
def test_a_buyer_checkpoint_plays_the_buyer(stores, tmp_path):
    folder, store = stores
    db = str(folder / "side.db")
    out = tmp_path / "buyer"
    assert (
        main(
            [
                "--db",
                db,
                "train",
                "bc",
                "--task",
                "car-dealer",
                "--side",
                "partner",
                "--out",
                str(out),
                "--max-steps",
                "2",
                "--batch-size",
                "4",
                "--n-embd",
                "32",
                "--n-head",
                "2",
                "--n-layer",
                "1",
                "--vocab-size",
                "300",
                "--eval-episodes",
                "0",
                "--no-progress",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "--db",
                db,
                "generate",
                "car-dealer",
                "--policy",
                "behaviour",
                "--partner",
                str(out),
                "--episodes",
                "2",
                "--seed",
                "900",
                "--quiet",
            ]
        )
        == 0
    )
    played = select_episode_ids(
        store, DatasetQuery(task="car-dealer", partner_kinds=["checkpoint"])
    )
    assert len(played) == 2
    assert (
        main(
            [
                "--db",
                db,
                "generate",
                "car-dealer",
                "--partner",
                str(tmp_path / "nothing"),
                "--quiet",
            ]
        )
        == 1
    )


def test_a_checkpoint_plays_only_the_side_it_learnt(stores, tmp_path, capsys):
    from support.checkpoint_support import tiny_checkpoint

    from envs.players.agents import AgentChoiceError, make_agent

    folder, store = stores
    db = str(folder / "side.db")
    buyer = tmp_path / "buyer"
    assert (
        main(
            [
                "--db",
                db,
                "train",
                "bc",
                "--task",
                "car-dealer",
                "--side",
                "partner",
                "--out",
                str(buyer),
                "--max-steps",
                "1",
                "--batch-size",
                "4",
                "--n-embd",
                "32",
                "--n-head",
                "2",
                "--n-layer",
                "1",
                "--vocab-size",
                "300",
                "--no-progress",
            ]
        )
        == 0
    )  # no final evaluation: it would play the seller
    assert make_agent("car-dealer", str(buyer), role="buyer").meta["side"] == "partner"
    with pytest.raises(AgentChoiceError, match="choose it as the partner"):
        make_agent("car-dealer", str(buyer), role="seller")
    capsys.readouterr()
    assert main(["--db", db, "eval", str(buyer), "--episodes", "1"]) == 1
    assert "lmrl generate TASK --partner CHECKPOINT" in capsys.readouterr().err
    seller = tiny_checkpoint(tmp_path / "maze", "bc")  # an agent-side checkpoint (of another task)
    with pytest.raises(AgentChoiceError, match="lmrl train bc --side partner"):
        make_agent("car-dealer", str(seller), role="buyer")
    with pytest.raises(ValueError, match="--eval-episodes 0"):
        resolve(
            TrainConfig(algo="bc", task="car-dealer", side="partner", eval_episodes=5),
            {"side", "eval_episodes"},
        )


def test_a_hot_seat_oracle_is_learnt_from_what_the_person_answered(tmp_path):
    """Both sides people: ann asks, bob answers; bob's answers are the oracle's windows."""
    from data.recorder import EpisodeRecorder
    from envs.players.session import EpisodeSession, HumanAgent

    store = Store(tmp_path / "hot.db")
    answers = ["Yes.", "No.", "Yes."]
    bob = HumanAgent("bob", role="oracle")
    s = EpisodeSession(
        "twenty-questions", partner=bob, player="ann", seed=2, listener=EpisodeRecorder(store)
    )
    s.start()
    for question, answer in zip(
        ("Is it alive?", "Is it a bird?", "Is it a mammal?"), answers, strict=True
    ):
        bob.answer(answer, typed=answer.lower())
        s.human_input(question)
    s.abandon()
    ids = select_episode_ids(
        store,
        DatasetQuery(
            task="twenty-questions", sources=["human"], partner_kinds=["human"], status="any"
        ),
    )
    assert len(ids) == 1
    wins, skipped = partner_windows(store, ids)
    assert skipped == 0 and [w.segments[1][0] for w in wins] == [a + "\n" for a in answers]
    assert (
        "Is it a bird?" in wins[1].segments[0][0]
    )  # the oracle's view holds the question it answered
    store.close()
