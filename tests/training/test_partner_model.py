"""The partner model of ``lmrl train --partner-model``: naive Bayes over what the partner said,
fitted on the same data; training prompts and play prompts end with the same belief line."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

import envs  # noqa: E402
from data.datasets import DatasetQuery, load_episodes  # noqa: E402
from data.generate import generate  # noqa: E402
from data.store import Store  # noqa: E402
from envs.core import Text  # noqa: E402
from training.agents.checkpoint_agent import load_agent  # noqa: E402
from training.config import TrainConfig, resolve  # noqa: E402
from training.datasets.partner_conditioned import PartnerModel, condition, fit, partner_label  # noqa: E402
from training.datasets.source import fit_partner_model, load_windows  # noqa: E402
from training.datasets.windows import episode_windows  # noqa: E402
from training.errors import TrainingError  # noqa: E402


def toy_model() -> PartnerModel:
    eps = [
        (["I love the sunroof.\n", "Sunroof please.\n"], "feature"),
        (["That price is fine.\n"], "anchoring"),
        (["Hello there.\n"], "none"),
    ] * 3
    return fit("car-dealer", eps)


def test_the_model_believes_what_the_partner_said():
    m = toy_model()
    assert m.labels == ["anchoring", "feature", "none"]
    prior = m.posterior([])
    assert prior == pytest.approx({"anchoring": 1 / 3, "feature": 1 / 3, "none": 1 / 3})
    post = m.posterior(["a sunroof, a sunroof\n"])
    assert post["feature"] > 0.9 and sum(post.values()) == pytest.approx(1.0)
    assert m.posterior(["what a fine price\n"])["anchoring"] > 0.5
    assert m.posterior(["zebra quantum\n"]) == pytest.approx(prior)  # unknown words: no evidence
    line = m.line(["sunroof sunroof\n"])
    assert (
        line.startswith("Buyer model: anchoring ")
        and line.endswith("%\n")
        and "feature 90%" in line
    )
    again = PartnerModel.from_json(json.loads(json.dumps(m.to_json())))
    assert again.line(["price\n"]) == m.line(["price\n"])


def test_windows_end_with_the_line_after_what_the_partner_had_said():
    m = toy_model()
    pairs = [
        ("Hi!\n", "I love the sunroof.\n", 0.0),
        ("$30,000?\n", "Fine price.\n", 0.0),
        ("Deal?\n", "", 1.0),
    ]
    wins = condition(
        episode_windows("Start\n", pairs, True, "history", 7), m, [p[1] for p in pairs]
    )
    assert len(wins) == 3
    for k, w in enumerate(wins):
        said = [p[1] for p in pairs[:k]]
        assert w.segments[0][0].endswith(m.line(said)) and w.segments[1] == (
            pairs[k][0],
            True,
            pairs[k][2],
        )
        assert w.episode == 7 and w.keep_end
    # a chain: a window's next prompt is the next window's prompt
    assert (
        wins[0].next_prompt == wins[1].segments[0][0]
        and wins[1].next_prompt == wins[2].segments[0][0]
    )
    assert wins[2].next_prompt is None and wins[2].done
    with pytest.raises(ValueError, match="one window per step"):
        condition(episode_windows("Start\n", pairs, True, "episode"), m, [])


def test_the_partner_model_is_for_tasks_that_record_the_partner():
    assert (
        partner_label("car-dealer", {"buyer_bias": {"kind": "anchoring", "feature": None}})
        == "anchoring"
    )
    assert (
        partner_label("car-dealer", {"decision": None}) is None
        and partner_label("maze-fo", {"x": 1}) is None
    )
    with pytest.raises(ValueError, match="record the partner"):
        fit("maze-fo", [(["a"], "x")])
    with pytest.raises(ValueError, match="buyer_bias=mixed"):
        fit("car-dealer", [])
    cfg = resolve(TrainConfig(algo="mc", task="car-dealer", partner_model=True), {"partner_model"})
    assert cfg.windows == "history"
    with pytest.raises(ValueError, match="one window per step"):
        resolve(
            TrainConfig(algo="bc", task="car-dealer", partner_model=True, windows="episode"),
            {"partner_model", "windows"},
        )


@pytest.fixture(scope="module")
def biased_store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("partner")
    store = Store(folder / "cd.db")
    generate(
        store,
        "car-dealer",
        envs.make_policy("car-dealer", "behaviour"),
        24,
        seed=100,
        options={"buyer_bias": "mixed"},
    )
    yield folder, store
    store.close()


def test_a_partner_conditioned_checkpoint_plays_with_the_prompts_it_was_trained_on(biased_store):
    from training.offline.loop import train

    folder, store = biased_store
    base = dict(
        algo="mc",
        task="car-dealer",
        partner_model=True,
        max_steps=2,
        batch_size=8,
        n_embd=32,
        n_head=2,
        n_layer=1,
        vocab_size=400,
        eval_episodes=0,
        progress=False,
        log_every=1,
        task_options={"buyer_bias": "mixed"},
    )
    cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
    out = train(cfg, store, DatasetQuery(task="car-dealer"), folder / "mc")
    agent = load_agent(out["checkpoint"])
    saved = json.loads((folder / "mc" / "checkpoint" / "dataset.json").read_text())["partner_model"]
    assert agent.partner_model is not None and agent.partner_model.to_json() == saved
    # the agent's prompt for a stored history is the training prompt of that step
    ids = [int(r["id"]) for r in store.db.query("SELECT id FROM episodes ORDER BY id")]
    model = fit_partner_model(store, ids, "car-dealer")
    wins = load_windows(store, ids[:1], "history", partner_model=model)
    ep = next(iter(load_episodes(store, ids[:1])))
    history = [Text(ep.episode["first_observation"], False)]
    for k, s in enumerate(ep.steps[:3]):
        assert agent.prompt(history) == wins[k].segments[0][0]
        history += [Text(s["action"], True), Text(s["observation"], False)]
    action = agent.act(history)
    assert isinstance(action, str) and action


def test_data_without_partner_types_is_one_clear_error(tmp_path):
    store = Store(tmp_path / "plain.db")
    generate(store, "car-dealer", envs.make_policy("car-dealer", "behaviour"), 4, seed=100)
    with pytest.raises(TrainingError, match="buyer_bias=mixed"):
        fit_partner_model(
            store, [int(r["id"]) for r in store.db.query("SELECT id FROM episodes")], "car-dealer"
        )
    store.close()
