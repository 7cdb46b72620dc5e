"""`lmrl merge` as properties: random small stores, built with the real store API (bulk episodes,
episodes played step by step and left in progress, labels, runs with checkpoints and evaluations,
copies of another host's store that then go on, stores that already merged others), merged in
random orders, in one call or one by one, and again: always the same content (compared by uid,
not by integer id), nothing lost, nothing twice, the most advanced version of each episode."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from data.io.merge import merge_stores
from data.runs import add_checkpoint, add_evaluation, finish_run, start_run
from data.store import EpisodeRecord, StepRecord, Store, Who

TEXT = st.text(alphabet="abcé \n", max_size=6)
OP = st.one_of(
    st.tuples(st.just("batch"), st.integers(1, 3), TEXT, st.booleans()),
    st.tuples(
        st.just("live"), st.integers(0, 3), st.booleans(), st.sampled_from(["ann", "bob", None])
    ),
    st.tuples(st.just("label"), st.integers(0, 50), TEXT),
    st.tuples(st.just("run"), st.booleans()),
    st.tuples(st.just("advance"), st.booleans()),
    st.tuples(st.just("finish_runs")),
)
SPEC = st.tuples(
    st.one_of(st.none(), st.integers(0, 3)),
    st.lists(OP, max_size=4),
    st.one_of(st.none(), st.integers(0, 3)),
)
"""A store: the earlier store it starts as a copy of (or new), what is done in it, and an
earlier store it then merges into itself. A copy first goes on with an episode that was still
being played and finishes the runs that were still running (so stores hold different versions
of the same rows)."""


def _apply(s: Store, op: tuple[Any, ...], seed: int) -> None:
    kind = op[0]
    eids = [e["id"] for e in s.recent_episodes(100)]
    runs = [r[0] for r in s.db.execute("SELECT id FROM runs ORDER BY id").fetchall()]
    if kind == "batch":
        run_id = runs[-1] if op[3] and runs else None
        recs = [
            EpisodeRecord(
                "maze-fo",
                1,
                seed + i,
                "start " + op[2],
                [StepRecord("up\n", op[2], -1.0), StepRecord("down\n", "Success\n", 0.0, True)],
                Who("scripted", "behaviour"),
                run_id=run_id,
                source="agent" if run_id else "scripted",
                labels=[{"label": "good", "step_idx": 1}] if i else None,
            )
            for i in range(op[1])
        ]
        s.write_episodes(recs)
    elif kind == "live":
        eid = s.start_episode(
            "maze-fo", 1, seed, "here\n", Who("human", "human"), player=op[3], options={"k": seed}
        )
        for i in range(op[1]):
            s.add_step(eid, i, f"a{i}\n", f"o{i}\n", -1.0, think_ms=i)
        if op[2]:
            s.finish_episode(eid, status="finished", success=False)
    elif kind == "label" and eids:
        s.add_label(eids[op[1] % len(eids)], "note", op[2] or None, author="ann")
    elif kind == "run":
        r = start_run(
            s,
            kind="train",
            algo="bc",
            task="maze-fo",
            config={"seed": seed},
            dataset_query=None,
            episode_ids=eids[:3],
            out_dir=f"out{seed}",
        )
        c = add_checkpoint(s, r, f"out{seed}/ckpt", 10, {"loss": 1.5})
        add_evaluation(s, "maze-fo", "ckpt", {"episodes": 4, "mean_return": -2.0, "k": seed}, c)
        if op[1]:
            finish_run(s, r, "finished", {"loss": 0.5})
    elif kind == "advance":  # a copied store goes on with an episode that was still being played
        live = s.unfinished_episodes(1)
        if live:
            eid = live[0]["id"]
            s.add_step(eid, live[0]["n_steps"], "more\n", "more\n", 1.0)
            if op[1]:
                s.finish_episode(eid, status="abandoned")
    elif kind == "finish_runs":
        for r in runs:
            finish_run(s, r, "failed", {"why": "copy"})


def build(folder: Path, specs: list[tuple[Any, ...]]) -> list[Path]:
    paths: list[Path] = []
    for i, (parent, ops, absorb) in enumerate(specs):
        p = folder / f"host{i}.db"
        if parent is not None and parent < i:
            shutil.copy(paths[parent], p)
        s = Store(p)
        if parent is not None and parent < i:
            ops = [("advance", i % 2 == 0), ("finish_runs",), *ops]
        for j, op in enumerate(ops):
            _apply(s, op, seed=100 * i + 10 * j)
        s.close()
        if absorb is not None and absorb < i:
            merge_stores([paths[absorb]], p)
        paths.append(p)
    return paths


def content(path: Path) -> dict[str, Any]:
    """Everything a store holds, with ids replaced by uids (what must not depend on the order)."""
    s = Store(path)
    q = lambda sql: [dict(r) for r in s.db.query(sql)]  # noqa: E731
    uid = {
        t: {r["id"]: r["uid"] for r in q(f"SELECT id, uid FROM {t}")}
        for t in ("runs", "checkpoints", "episodes")
    }

    def rows(table: str, refs: dict[str, str]) -> dict[str, dict[str, Any]]:
        out = {}
        for r in q(f"SELECT * FROM {table}"):
            r.pop("id")
            for col, ref in refs.items():
                r[col] = uid[ref].get(r[col])
            out[r["uid"]] = r
        return out

    runs = rows("runs", {})
    for r in runs.values():
        if r["episode_ids"] is not None:
            r["episode_ids"] = [uid["episodes"][i] for i in json.loads(r["episode_ids"])]
    eps = rows("episodes", {"run_id": "runs"})
    steps: dict[str, list[dict[str, Any]]] = {}
    for step in q("SELECT * FROM steps ORDER BY episode_id, idx"):
        steps.setdefault(uid["episodes"][step.pop("episode_id")], []).append(step)
    for u, e in eps.items():
        e["steps"] = steps.get(u, [])
    out = {
        "players": sorted(tuple(r.values()) for r in q("SELECT * FROM players")),
        "runs": runs,
        "episodes": eps,
        "checkpoints": rows("checkpoints", {"run_id": "runs"}),
        "evaluations": rows("evaluations", {"checkpoint_id": "checkpoints"}),
        "labels": rows("labels", {"episode_id": "episodes"}),
        "n_steps": s.db.execute("SELECT COUNT(*) FROM steps").fetchone()[0],
    }
    s.close()
    return out


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=st.lists(SPEC, min_size=1, max_size=4), data=st.data())
def test_any_stores_in_any_order_merge_to_the_same_content(specs, data) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = build(folder, specs)
        before = {p: p.read_bytes() for p in paths}
        one = folder / "one.db"
        merge_stores(data.draw(st.permutations(paths)), one)
        two = folder / "two.db"
        for p in data.draw(st.permutations(paths)):
            merge_stores([p], two)
        merged = content(one)
        assert content(two) == merged
        merge_stores(data.draw(st.permutations(paths)), two)  # merging again changes nothing
        merge_stores([two, one], two)  # nor does merging a store into itself, or an equal one
        assert content(two) == merged
        assert all(p.read_bytes() == before[p] for p in paths)  # the inputs are left untouched

        versions: dict[str, list[tuple[bool, int]]] = {}
        for p in paths:
            for uid, e in content(p)["episodes"].items():
                versions.setdefault(uid, []).append((e["status"] != "in_progress", len(e["steps"])))
        assert set(merged["episodes"]) == set(versions)  # nothing lost, nothing twice
        for uid, e in merged["episodes"].items():  # the most advanced version won
            assert (e["status"] != "in_progress", len(e["steps"])) == max(versions[uid])
            assert e["n_steps"] == len(e["steps"])
        assert merged["n_steps"] == sum(len(e["steps"]) for e in merged["episodes"].values())
