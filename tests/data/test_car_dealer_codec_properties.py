"""LMRL's Car Dealer JSON format, properties: any episode exports to what LMRL's loader loads, and
import -> export is the identity."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.car_dealer_lmrl import LMRL_AGENTS, lmrl_load

import envs
from data.datasets import DatasetQuery, load_episodes, select_episode_ids
from data.io.formats import export_episodes, import_episodes
from data.store import EpisodeRecord, StepRecord, Store, Who
from envs.car_dealer.data import BRANDS, BUDGETS, FEATURES, PERSONALITIES, TYPES


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


TEXTS = st.sampled_from(
    ["", "  ", "Hi!", "Hmm.", "We have a 2022 Toyota RAV4 for $29,500."]
) | st.text(max_size=12)
OUTPUTS = (
    st.none()
    | st.builds(
        lambda msrp, price: {"car_bought": True, "msrp": msrp, "buy_price": price},
        st.integers(1000, 200_000),
        st.integers(0, 200_000),
    )
    | st.builds(
        lambda msrp: {"car_bought": False, "msrp": msrp, "buy_price": None},
        st.integers(1000, 200_000),
    )
)
ITEMS = st.builds(
    lambda info, lines, output: (
        {"buyer_info": info, "lines": lines} | ({} if output is None else {"output": output})
    ),
    st.fixed_dictionaries(
        {
            "personality": st.sampled_from(PERSONALITIES),
            "preferred_brands": st.sampled_from(BRANDS),
            "preferred_type": st.sampled_from(TYPES),
            "budget": st.sampled_from(BUDGETS),
            "preferred_features": st.lists(
                st.sampled_from(FEATURES), min_size=1, max_size=4, unique=True
            ),
        }
    ),
    st.lists(
        st.fixed_dictionaries({"role": st.sampled_from(["Seller", "Buyer"]), "text": TEXTS}),
        min_size=1,
        max_size=8,
    ),
    OUTPUTS,
)
PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@PROPERTY
@given(item=ITEMS)
def test_property_lmrl_items_import_and_export_unchanged(item: dict[str, Any]) -> None:
    """Runs of one side, empty lines, no decision: the export is the item (texts stripped), it
    loads in LMRL's loader, and LMRL's seller-side reward is the imported return."""
    canonical = dict(
        item, lines=[{"role": x["role"], "text": x["text"].strip()} for x in item["lines"]]
    )
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
            x["role"] == "Seller" for x in item["lines"]
        )
        _round_trips(text, where)


BUYER_SAYS = TEXTS | st.sampled_from(
    [
        "Output: Decision=Accept MSRP=$32,000 Buy Price=$29,500",
        "Deal. Output: Decision=Reject MSRP=$25,000",
        "Accept MSRP=$32,000 Buy Price=$29,500",
        "Fine Output: Decision=Accept MSRP=$32,000",
    ]
)


@PROPERTY
@given(
    seed=st.integers(0, 2**20),
    actions=st.lists(TEXTS, min_size=1, max_size=6),
    replies=st.lists(BUYER_SAYS, min_size=7, max_size=7),
)
def test_property_played_episodes_export_to_what_lmrl_loads(
    seed: int, actions: list[str], replies: list[str]
) -> None:
    """Episodes played to the end (a decision, a forced one, none), with empty lines anywhere."""
    task = envs.make("car-dealer", partner_replies=replies, max_texts=2 * len(actions))
    task.reset(seed)
    steps = []
    for action in actions:
        t = task.step(action)
        steps.append(
            StepRecord(
                action, t.observation, t.reward, t.terminated, t.truncated, t.info, role="seller"
            )
        )
        if t.terminated or t.truncated:
            break
    decided = steps[-1].info["decision"] is not None
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        store = Store(where / "in.db")
        try:
            store.write_episodes(
                [
                    EpisodeRecord(
                        "car-dealer",
                        1,
                        seed,
                        "Start\n",
                        steps,
                        Who("scripted", "x"),
                        partner=Who("scripted", "replay"),
                        success=False,
                    )
                ]
            )
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
