"""Property: any JSON value in any field of an imported file either imports cleanly (and then every
export works, the train/eval split included) or is refused with a one-line FormatError; no other
exception, and nothing written on refusal."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.episode_files import DELETE, maze_episode, with_field

import envs
from data.datasets import DatasetQuery
from data.io.formats import FormatError, export_episodes, import_episodes
from data.store import Store

GOOD = maze_episode()
JSON_LIST_TASKS = ("twenty-questions", "guess-city", "car-dealer")
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(2**80), 2**80)
    | st.floats()
    | st.text(max_size=12)
    | st.text(st.characters(blacklist_categories=()), max_size=4)
    | st.sampled_from(
        ["", "finished", "agent", "1", "move up\n", "2026-01-01T00:00:00", *envs.ids()]
    ),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.text(st.characters(blacklist_categories=()), max_size=6), inner, max_size=3
        )
    ),
    max_leaves=6,
)
VALUES = JSON_VALUES | st.just(DELETE)

EPISODE_PATHS = [*GOOD, "steps.0", "steps.-1", "labels.0", "unknown"]
EPISODE_PATHS += [f"steps.{i}.{k}" for i in (0, -1) for k in GOOD["steps"][0]]
EPISODE_PATHS += [f"labels.0.{k}" for k in GOOD["labels"][0]]

LMRL_ITEMS: dict[str, Any] = {
    "maze-fo": [
        {"state": "s0\n", "action": "move up\n", "reward": -1.0, "done": False},
        {"state": "s1\n", "action": "move up\n", "reward": 0.0, "done": True},
    ],
    "maze-po": {
        "text_history": ["o0\n", "move up\n", "Success\n"],
        "rewards": [0.0, 0.0, 0.0],
        "dones": [False, True, True],
    },
    "textnav-po": {"text_history": ["room", "go west", "You won"], "rewards": [1], "dones": [True]},
    "wordle": {
        "sequence": [["Wordle:\n", 0.0], ["c r a n e\n", 1.0], ["g g g g g\n", 0.0]],
        "reward": [0, 0.0],
        "done": True,
    },
    "twenty-questions": [
        {"lines": ["Is it an animal? No.", "Is it a car? Yes."], "correct": True, "word": ["Car"]}
    ],
    "guess-city": [
        {"lines": ["Is it hot? Yes.", "Is it Delhi? Yes."], "correct": True, "word": "delhi,india"}
    ],
    "car-dealer": [
        {
            "buyer_info": {
                "personality": "polite",
                "preferred_brands": "Toyota",
                "preferred_type": "SUV",
                "preferred_features": ["sunroof"],
                "budget": 30000,
            },
            "lines": [{"role": "Seller", "text": "Hi."}, {"role": "Buyer", "text": "Deal."}],
            "output": {"car_bought": True, "msrp": 32000, "buy_price": 29500},
        }
    ],
    "chess": [
        {"state": "8/8/8/8/8/5k2/8/5K1Q w - - 0 1", "action": "Qh3+", "reward": 0.0, "done": False},
        {"state": "8/8/8/8/8/5k1Q/8/5K2 b - - 1 1", "action": "Kf4", "reward": 0.0, "done": True},
    ],
}


def _paths(node: Any, prefix: str = "") -> list[str]:
    out = [prefix.rstrip(".")] if prefix else []
    items = (
        enumerate(node)
        if isinstance(node, list)
        else node.items()
        if isinstance(node, dict)
        else []
    )
    for k, v in items:
        out += _paths(v, f"{prefix}{k}.")
    if isinstance(node, dict):
        out.append(f"{prefix}unknown")
    return out


def _import_then_export(text: str, fmt: str, task: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / ("in.json" if task in JSON_LIST_TASKS else "in.jsonl")
        src.write_text(text)
        store = Store(":memory:")
        try:
            try:
                n = import_episodes(store, src, fmt, task)
            except FormatError as e:
                assert "\n" not in str(e) and str(e).startswith(("line ", "item "))
                assert store.count() == 0
                return
            assert n == store.count() <= 1
            t = task or store.recent_episodes(1)[0]["task"]
            for query in (
                DatasetQuery(),
                DatasetQuery(split="train"),
                DatasetQuery(split="eval"),
                DatasetQuery(status="any", task=t),
            ):
                export_episodes(store, io.StringIO(), "jsonl", query)
            for status in ("finished", "any"):
                export_episodes(store, io.StringIO(), "lmrl", DatasetQuery(task=t, status=status))
        finally:
            store.close()


SETTINGS = settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(path=st.sampled_from(EPISODE_PATHS), value=VALUES)
def test_any_value_in_any_field_of_our_jsonl(path: str, value: Any) -> None:
    _import_then_export(json.dumps(with_field(GOOD, path, value)) + "\n", "jsonl", None)


@SETTINGS
@given(data=st.data(), task=st.sampled_from(sorted(LMRL_ITEMS)))
def test_any_value_in_any_field_of_an_lmrl_item(data: st.DataObject, task: str) -> None:
    base = LMRL_ITEMS[task]
    path = data.draw(st.sampled_from(["", *_paths(base)]), label="path")
    doc = with_field(base, path, data.draw(VALUES, label="value"))
    _import_then_export(json.dumps(doc) + "\n", "lmrl", task)
