"""LMRL's Car Dealer JSON format: export, import and the round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.car_dealer_lmrl import LMRL_AGENTS, lmrl_load

import envs
from data.datasets import DatasetQuery, load_episodes, select_episode_ids
from data.io.formats import FormatError, export_episodes, import_episodes
from data.store import EpisodeRecord, StepRecord, Store, Who

# fmt: off
ITEM = {
    "buyer_info": {"personality": "polite", "preferred_brands": "a Toyota", "preferred_type": "SUV",
                   "preferred_features": ["sunroof", "heated seats"], "budget": 30000},
    "lines": [
        {"role": "Seller", "text": "Hi! Welcome. What kind of car are you looking for?"},
        {"role": "Buyer", "text": "Hello, I'm interested in a Toyota SUV with a sunroof."},
        {"role": "Seller", "text": "We have a 2022 RAV4 with a sunroof for $32,000."},
        {"role": "Seller", "text": "It also has heated seats."},
        {"role": "Buyer", "text": "That's a bit above my budget. Could you do $29,000?"},
        {"role": "Seller", "text": "I can do $29,500."},
        {"role": "Buyer", "text": "Deal, I'll take it."},
    ],
    "output": {"car_bought": True, "msrp": 32000, "buy_price": 29500},
}
# fmt: on


def generate(store: Store, n: int, policy: str = "behaviour") -> None:
    recs = []
    for seed in range(n):
        ep = envs.run_episode(envs.make("car-dealer"), envs.make_policy("car-dealer", policy), seed)
        steps = [
            StepRecord(
                t.action, t.observation, t.reward, t.terminated, t.truncated, t.info, role="seller"
            )
            for t in ep.transitions
        ]
        recs.append(
            EpisodeRecord(
                "car-dealer",
                1,
                seed,
                ep.first_observation,
                steps,
                Who("scripted", policy),
                partner=Who("scripted", "persona-buyer"),
                success=ep.transitions[-1].info["success"],
            )
        )
    store.write_episodes(recs)


def export(store: Store, path: Path) -> list[dict]:
    with path.open("w") as f:
        export_episodes(store, f, "lmrl", DatasetQuery(task="car-dealer"))
    return json.loads(path.read_text())


def test_export_import_export_round_trips(tmp_path: Path, store: Store) -> None:
    generate(store, 25)
    a = export(store, tmp_path / "a.json")
    assert len(a) == 25
    assert set(a[0]) == {"buyer_info", "lines", "output"}
    assert {line["role"] for item in a for line in item["lines"]} == {"Seller", "Buyer"}
    assert all("Output:" not in line["text"] for item in a for line in item["lines"])
    other = Store(tmp_path / "other.db")
    assert import_episodes(other, tmp_path / "a.json", "lmrl", "car-dealer") == 25
    assert export(other, tmp_path / "b.json") == a
    other.close()


def test_imported_returns_match_generated_returns(tmp_path: Path, store: Store) -> None:
    generate(store, 15, "strong")
    export(store, tmp_path / "a.json")
    other = Store(tmp_path / "other.db")
    import_episodes(other, tmp_path / "a.json", "lmrl", "car-dealer")
    mine = sorted(
        round(e.total_return, 9)
        for e in load_episodes(store, select_episode_ids(store, DatasetQuery(task="car-dealer")))
    )
    theirs = sorted(
        round(e.total_return, 9)
        for e in load_episodes(other, select_episode_ids(other, DatasetQuery(task="car-dealer")))
    )
    assert mine == theirs
    other.close()


def test_import_of_a_literal_item(tmp_path: Path, store: Store) -> None:
    (tmp_path / "train.json").write_text(json.dumps([ITEM]))
    assert import_episodes(store, tmp_path / "train.json", "lmrl", "car-dealer") == 1
    (ep,) = load_episodes(store, select_episode_ids(store, DatasetQuery(task="car-dealer")))
    assert ep.episode["first_observation"] == "Start\n"
    assert [s["action"] for s in ep.steps] == [
        "Hi! Welcome. What kind of car are you looking for?\n",
        "We have a 2022 RAV4 with a sunroof for $32,000. It also has heated seats.\n",
        "I can do $29,500.\n",
    ]
    assert ep.steps[-1]["observation"] == "Deal, I'll take it.\n"
    assert [s["reward"] for s in ep.steps] == [0.0, 0.0, pytest.approx(0.951613, abs=1e-6)]
    assert ep.steps[-1]["terminated"] and ep.episode["success"]
    assert ep.steps[-1]["info"]["partner_replies"] == [
        "Deal, I'll take it. Output: Decision=Accept MSRP=$32,000 Buy Price=$29,500\n"
    ]
    assert ep.episode["meta"]["buyer_info"] == ITEM["buyer_info"]


def test_imported_episode_replays_with_its_partner_replies(tmp_path: Path, store: Store) -> None:
    (tmp_path / "train.json").write_text(json.dumps([ITEM]))
    import_episodes(store, tmp_path / "train.json", "lmrl", "car-dealer")
    (ep,) = load_episodes(store, select_episode_ids(store, DatasetQuery(task="car-dealer")))
    replies = [r for s in ep.steps for r in s["info"]["partner_replies"]]
    task = envs.make("car-dealer", partner_replies=replies)
    again = envs.replay(
        task, None, [s["action"] for s in ep.steps], {"persona": ep.episode["meta"]["buyer_info"]}
    )
    assert [t.reward for t in again.transitions] == [s["reward"] for s in ep.steps]
    assert again.transitions[-1].observation == "Deal, I'll take it. \n"


def test_buyer_first_and_missing_output(tmp_path: Path, store: Store) -> None:
    item = dict(
        ITEM,
        lines=[
            {"role": "Buyer", "text": "Hi, I need a truck."},
            {"role": "Seller", "text": "Sure."},
        ],
    )
    del item["output"]
    (tmp_path / "x.json").write_text(json.dumps([item]))
    import_episodes(store, tmp_path / "x.json", "lmrl", "car-dealer")
    (ep,) = load_episodes(store, select_episode_ids(store, DatasetQuery(task="car-dealer")))
    assert [s["action"] for s in ep.steps] == ["\n", "Sure.\n"]
    assert ep.steps[-1]["truncated"] and ep.total_return == 0.0
    out = export(store, tmp_path / "y.json")
    assert out == [item]


def test_an_episode_without_a_decision_exports_no_output_key(tmp_path: Path, store: Store) -> None:
    """``"output": null`` makes LMRL's loader raise (it tests ``"output" in item``)."""
    task = envs.make("car-dealer", partner_replies=["Hmm.\n"] * 3, max_texts=4)
    ep = envs.run_episode(task, envs.make_policy("car-dealer", "strong"), 1)
    assert ep.transitions[-1].truncated and ep.transitions[-1].info["decision"] is None
    steps = [
        StepRecord(
            t.action, t.observation, t.reward, t.terminated, t.truncated, t.info, role="seller"
        )
        for t in ep.transitions
    ]
    store.write_episodes(
        [
            EpisodeRecord(
                "car-dealer",
                1,
                1,
                ep.first_observation,
                steps,
                Who("scripted", "strong"),
                partner=Who("scripted", "replay"),
                success=False,
            )
        ]
    )
    (item,) = export(store, tmp_path / "a.json")
    assert "output" not in item
    for agent in LMRL_AGENTS:
        texts, rewards, done = lmrl_load(item, agent)
        assert not done and not any(rewards)
    with pytest.raises(TypeError):  # what the old export wrote
        lmrl_load(dict(item, output=None), "Seller")


def test_empty_lines_and_runs_of_one_side_survive_the_round_trip(
    tmp_path: Path, store: Store
) -> None:
    item = dict(
        ITEM,
        lines=[
            {"role": "Seller", "text": "Hi!"},
            {"role": "Buyer", "text": ""},
            {"role": "Seller", "text": ""},
            {"role": "Buyer", "text": "Hello?"},
            {"role": "Seller", "text": "We have a RAV4."},
            {"role": "Seller", "text": "It's $29,500."},
            {"role": "Buyer", "text": "Hmm."},
            {"role": "Buyer", "text": "Deal, I'll take it."},
        ],
    )
    (tmp_path / "x.json").write_text(json.dumps([item]))
    import_episodes(store, tmp_path / "x.json", "lmrl", "car-dealer")
    (ep,) = load_episodes(store, select_episode_ids(store, DatasetQuery(task="car-dealer")))
    # LMRL joins the seller's own lines (its actions) and keeps the buyer's apart.
    assert [(s["action"], s["observation"]) for s in ep.steps] == [
        ("Hi!\n", "\n"),
        ("\n", "Hello?\n"),
        ("We have a RAV4. It's $29,500.\n", "Hmm.\nDeal, I'll take it.\n"),
    ]
    texts, rewards, _ = lmrl_load(item, "Seller")
    assert [t for t, is_action in texts if is_action] == [s["action"] for s in ep.steps]
    assert "".join(t for t, is_action in texts[1:] if not is_action) == "".join(
        s["observation"] for s in ep.steps
    )
    assert sum(rewards) == pytest.approx(ep.total_return)
    assert ep.steps[-1]["info"]["partner_replies"] == [
        "Hmm. Deal, I'll take it. Output: Decision=Accept MSRP=$32,000 Buy Price=$29,500\n"
    ]
    assert export(store, tmp_path / "y.json") == [item]


@pytest.mark.parametrize(
    "bad",
    [
        {"lines": []},
        dict(ITEM, lines=[{"role": "Dealer", "text": "hi"}]),
        dict(ITEM, lines=[]),
        [1, 2],
    ],
)
def test_bad_items_are_format_errors(tmp_path: Path, store: Store, bad: object) -> None:
    (tmp_path / "bad.json").write_text(json.dumps([bad]))
    with pytest.raises(FormatError, match=r"^item 1 \(line 1\): "):
        import_episodes(store, tmp_path / "bad.json", "lmrl", "car-dealer")
