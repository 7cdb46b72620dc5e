"""LMRL's Car Dealer JSON format: export, import and the round trip."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import envs
from data.datasets import DatasetQuery, load_episodes, select_episode_ids
from data.io.formats import FormatError, export_episodes, import_episodes
from data.store import EpisodeRecord, StepRecord, Store, Who
from envs.car_dealer.data import BRANDS, BUDGETS, FEATURES, PERSONALITIES, TYPES

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
}  # fmt: skip


# -- LMRL-Gym's loader, restated ------------------------------------------------------------
LMRL_AGENTS = ("Buyer", "Seller", "Dealer")
"""The role names LMRL's loader may count as the agent's: its buyer is ``"Buyer"``; its seller
role prints as ``"Dealer"`` (so with the data's ``"Seller"`` lines it sees no actions); we check the
seller side with both names."""


def lmrl_load(item: dict[str, Any], agent: str) -> tuple[list[tuple[str, bool]], list[float], bool]:
    """What LMRL-Gym's ``create_trajectory_from_conversation`` makes of ``item`` for the agent
    speaking as ``agent``: (texts with is_action, rewards, done). Raises where it raises.

    Our own restatement of its logic: texts start with ``"Beginning of Conversation\\n"`` (the
    buyer's also with the persona line, built from every buyer_info field); each line is
    ``text + "\\n"``, an action when its role is ``agent``; the item is done when it has the key
    ``"output"``, and then the buyer gets the Output line as a last action (formatting msrp, and
    buy_price when bought, with thousands commas: ``None`` raises) while the seller gets the fancy
    reward on its last action (indexing msrp, car_bought and budget; buy_price when bought).
    Consecutive actions are joined with a space (their trailing newlines removed first).
    """
    texts: list[tuple[str, bool]] = [("Beginning of Conversation\n", False)]
    info = item["buyer_info"]
    if agent == "Buyer":
        texts.append((f"Personality: {info['personality']}. Prefers {info['preferred_brands']} "
                      f"{info['preferred_type']} with {', '.join(info['preferred_features'])}. "
                      f"Budget: ${info['budget']:,}\n", False))  # fmt: skip
    for line in item["lines"]:
        texts.append((line["text"] + "\n", line["role"] == agent))
    done = "output" in item
    if done and agent == "Buyer":
        out = item["output"]
        tail = f" Buy Price=${out['buy_price']:,}" if out["car_bought"] else ""
        decision = "Accept" if out["car_bought"] else "Reject"
        texts.append((f"Output: Decision={decision} MSRP=${out['msrp']:,}{tail}\n", True))
    joined: list[tuple[str, bool]] = []
    for text, is_action in texts:
        if is_action and joined and joined[-1][1]:
            joined[-1] = (joined[-1][0].rstrip("\n") + " " + text.rstrip("\n") + "\n", True)
        else:
            joined.append((text.rstrip("\n") + "\n", True) if is_action else (text, False))
    rewards = [0.0] * len(joined)
    if done and agent != "Buyer":
        out, budget = item["output"], info["budget"]
        msrp, bought = out["msrp"], out["car_bought"]
        price = out["buy_price"] if bought else None
        if msrp == 0:
            r = 0.0
        elif bought:
            r = 0.0 if price is None else price / ((budget + msrp) * 0.5)
        else:
            r = -(budget - msrp) / msrp
        last = max((i for i, (_, a) in enumerate(joined) if a), default=None)
        if last is not None:
            rewards[last] = r
    return joined, rewards, done


def generate(store: Store, n: int, policy: str = "behaviour") -> None:
    recs = []
    for seed in range(n):
        ep = envs.run_episode(envs.make("car-dealer"), envs.make_policy("car-dealer", policy), seed)
        steps = [StepRecord(t.action, t.observation, t.reward, t.terminated, t.truncated, t.info, role="seller")
                 for t in ep.transitions]  # fmt: skip
        recs.append(EpisodeRecord("car-dealer", 1, seed, ep.first_observation, steps, Who("scripted", policy),
                                  partner=Who("scripted", "persona-buyer"),
                                  success=ep.transitions[-1].info["success"]))  # fmt: skip
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
    mine = sorted(round(e.total_return, 9) for e in load_episodes(store, select_episode_ids(store, DatasetQuery(task="car-dealer"))))
    theirs = sorted(round(e.total_return, 9) for e in load_episodes(other, select_episode_ids(other, DatasetQuery(task="car-dealer"))))
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
    again = envs.replay(task, None, [s["action"] for s in ep.steps], {"persona": ep.episode["meta"]["buyer_info"]})
    assert [t.reward for t in again.transitions] == [s["reward"] for s in ep.steps]
    assert again.transitions[-1].observation == "Deal, I'll take it. \n"


def test_buyer_first_and_missing_output(tmp_path: Path, store: Store) -> None:
    item = dict(ITEM, lines=[{"role": "Buyer", "text": "Hi, I need a truck."},
                             {"role": "Seller", "text": "Sure."}])  # fmt: skip
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
    steps = [StepRecord(t.action, t.observation, t.reward, t.terminated, t.truncated, t.info, role="seller")
             for t in ep.transitions]  # fmt: skip
    store.write_episodes([EpisodeRecord("car-dealer", 1, 1, ep.first_observation, steps, Who("scripted", "strong"),
                                        partner=Who("scripted", "replay"), success=False)])  # fmt: skip
    (item,) = export(store, tmp_path / "a.json")
    assert "output" not in item
    for agent in LMRL_AGENTS:
        texts, rewards, done = lmrl_load(item, agent)
        assert not done and not any(rewards)
    with pytest.raises(TypeError):  # what the old export wrote
        lmrl_load(dict(item, output=None), "Seller")


def test_empty_lines_and_runs_of_one_side_survive_the_round_trip(tmp_path: Path, store: Store) -> None:
    item = dict(ITEM, lines=[
        {"role": "Seller", "text": "Hi!"}, {"role": "Buyer", "text": ""},
        {"role": "Seller", "text": ""}, {"role": "Buyer", "text": "Hello?"},
        {"role": "Seller", "text": "We have a RAV4."}, {"role": "Seller", "text": "It's $29,500."},
        {"role": "Buyer", "text": "Hmm."}, {"role": "Buyer", "text": "Deal, I'll take it."},
    ])  # fmt: skip
    (tmp_path / "x.json").write_text(json.dumps([item]))
    import_episodes(store, tmp_path / "x.json", "lmrl", "car-dealer")
    (ep,) = load_episodes(store, select_episode_ids(store, DatasetQuery(task="car-dealer")))
    # LMRL joins the seller's own lines (its actions) and keeps the buyer's apart.
    assert [(s["action"], s["observation"]) for s in ep.steps] == [
        ("Hi!\n", "\n"), ("\n", "Hello?\n"), ("We have a RAV4. It's $29,500.\n", "Hmm.\nDeal, I'll take it.\n")]
    texts, rewards, _ = lmrl_load(item, "Seller")
    assert [t for t, is_action in texts if is_action] == [s["action"] for s in ep.steps]
    assert "".join(t for t, is_action in texts[1:] if not is_action) == "".join(s["observation"] for s in ep.steps)
    assert sum(rewards) == pytest.approx(ep.total_return)
    assert ep.steps[-1]["info"]["partner_replies"] == [
        "Hmm. Deal, I'll take it. Output: Decision=Accept MSRP=$32,000 Buy Price=$29,500\n"]
    assert export(store, tmp_path / "y.json") == [item]


@pytest.mark.parametrize(
    "bad",
    [{"lines": []}, dict(ITEM, lines=[{"role": "Dealer", "text": "hi"}]), dict(ITEM, lines=[]), [1, 2]],
)
def test_bad_items_are_format_errors(tmp_path: Path, store: Store, bad: object) -> None:
    (tmp_path / "bad.json").write_text(json.dumps([bad]))
    with pytest.raises(FormatError, match=r"^item 1 \(line 1\): "):
        import_episodes(store, tmp_path / "bad.json", "lmrl", "car-dealer")


# -- properties: any episode exports to what LMRL loads, and import -> export is the identity -------
def _export_text(store: Store) -> str:
    out = io.StringIO()
    export_episodes(store, out, "lmrl", DatasetQuery(task="car-dealer"))
    return out.getvalue()


def _check_lmrl_loads(items: list[dict[str, Any]]) -> None:
    for item in items:
        assert set(item) <= {"buyer_info", "lines", "output"} and item.get("output", {}) is not None
        for agent in LMRL_AGENTS:
            lmrl_load(item, agent)


def _round_trips(text: str, where: Path) -> None:
    """Import ``text`` into a fresh store; its export is ``text`` byte for byte."""
    (where / "a.json").write_text(text, encoding="utf-8")
    other = Store(where / "other.db")
    try:
        import_episodes(other, where / "a.json", "lmrl", "car-dealer")
        assert _export_text(other) == text
    finally:
        other.close()


TEXTS = st.sampled_from(["", "  ", "Hi!", "Hmm.", "We have a 2022 Toyota RAV4 for $29,500."]) | st.text(max_size=12)
OUTPUTS = st.none() | st.builds(
    lambda msrp, price: {"car_bought": True, "msrp": msrp, "buy_price": price},
    st.integers(1000, 200_000), st.integers(0, 200_000),
) | st.builds(lambda msrp: {"car_bought": False, "msrp": msrp, "buy_price": None}, st.integers(1000, 200_000))
ITEMS = st.builds(
    lambda info, lines, output: {"buyer_info": info, "lines": lines} | ({} if output is None else {"output": output}),
    st.fixed_dictionaries({
        "personality": st.sampled_from(PERSONALITIES), "preferred_brands": st.sampled_from(BRANDS),
        "preferred_type": st.sampled_from(TYPES), "budget": st.sampled_from(BUDGETS),
        "preferred_features": st.lists(st.sampled_from(FEATURES), min_size=1, max_size=4, unique=True)}),
    st.lists(st.fixed_dictionaries({"role": st.sampled_from(["Seller", "Buyer"]), "text": TEXTS}),
             min_size=1, max_size=8),
    OUTPUTS,
)  # fmt: skip
PROPERTY = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # fmt: skip


@PROPERTY
@given(item=ITEMS)
def test_property_lmrl_items_import_and_export_unchanged(item: dict[str, Any]) -> None:
    """Runs of one side, empty lines, no decision: the export is the item (texts stripped), it
    loads in LMRL's loader, and LMRL's seller-side reward is the imported return."""
    canonical = dict(item, lines=[{"role": x["role"], "text": x["text"].strip()} for x in item["lines"]])
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        (where / "in.json").write_text(json.dumps([item]), encoding="utf-8")
        store = Store(where / "in.db")
        try:
            import_episodes(store, where / "in.json", "lmrl", "car-dealer")
            text = _export_text(store)
            (ep,) = load_episodes(store, select_episode_ids(store, DatasetQuery(task="car-dealer")))
        finally:
            store.close()
        assert json.loads(text) == [canonical]
        _check_lmrl_loads([canonical])
        _, rewards, done = lmrl_load(canonical, "Seller")
        assert done == ("output" in item)
        assert sum(rewards) == pytest.approx(ep.total_return, abs=1e-9) or not any(
            x["role"] == "Seller" for x in item["lines"])
        _round_trips(text, where)


BUYER_SAYS = TEXTS | st.sampled_from([
    "Output: Decision=Accept MSRP=$32,000 Buy Price=$29,500", "Deal. Output: Decision=Reject MSRP=$25,000",
    "Accept MSRP=$32,000 Buy Price=$29,500", "Fine Output: Decision=Accept MSRP=$32,000"])  # fmt: skip


@PROPERTY
@given(seed=st.integers(0, 2**20), actions=st.lists(TEXTS, min_size=1, max_size=6),
       replies=st.lists(BUYER_SAYS, min_size=7, max_size=7))  # fmt: skip
def test_property_played_episodes_export_to_what_lmrl_loads(seed: int, actions: list[str], replies: list[str]) -> None:
    """Episodes played to the end (a decision, a forced one, none), with empty lines anywhere."""
    task = envs.make("car-dealer", partner_replies=replies, max_texts=2 * len(actions))
    task.reset(seed)
    steps = []
    for action in actions:
        t = task.step(action)
        steps.append(StepRecord(action, t.observation, t.reward, t.terminated, t.truncated, t.info, role="seller"))
        if t.terminated or t.truncated:
            break
    decided = steps[-1].info["decision"] is not None
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        store = Store(where / "in.db")
        try:
            store.write_episodes([EpisodeRecord("car-dealer", 1, seed, "Start\n", steps, Who("scripted", "x"),
                                                partner=Who("scripted", "replay"), success=False)])  # fmt: skip
            text = _export_text(store)
        finally:
            store.close()
        (item,) = json.loads(text)
        assert ("output" in item) == decided
        assert len(item["lines"]) == 2 * len(steps)
        _check_lmrl_loads([item])
        _, rewards, _ = lmrl_load(item, "Seller")
        # An Accept without a price (reward 0 here and in LMRL's env) has no LMRL data form: it is
        # written as not bought, which LMRL's loader rewards as a refusal.
        priceless = decided and "Buy Price" not in steps[-1].info["partner_replies"][-1]
        if not priceless:
            assert sum(rewards) == pytest.approx(sum(s.reward for s in steps), abs=1e-9)
        _round_trips(text, where)
