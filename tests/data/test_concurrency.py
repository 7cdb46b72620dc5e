"""Eight `lmrl generate` processes and a reader on one new store: nothing lost, no lock error."""

from __future__ import annotations

import subprocess
import sys

import pytest

from data.store import Store


@pytest.mark.slow
def test_eight_writers_and_a_reader_lose_nothing(tmp_path) -> None:
    db = tmp_path / "shared.db"  # new: the eight also race to create and migrate it
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lmrl_tui",
                "--db",
                str(db),
                "generate",
                "maze-fo",
                "--episodes",
                "250",
                "--seed",
                str(1000 * i),
                "--batch",
                "50",
                "--quiet",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(8)
    ]
    reads = 0
    while any(w.poll() is None for w in writers):
        reader = subprocess.run(
            [sys.executable, "-m", "lmrl_tui", "--db", str(db), "stats"],
            capture_output=True,
            text=True,
        )
        if db.exists():
            assert reader.returncode == 0, reader.stderr
            reads += 1
    errors = [w.communicate()[1] for w in writers]
    assert [w.returncode for w in writers] == [0] * 8, errors
    assert not any("locked" in e or "Traceback" in e for e in errors)
    store = Store(db)
    assert store.count() == 8 * 250
    store.close()
    assert reads >= 1


# One served annotator, as a process: its own Store, PlaySession after PlaySession, every step
# committed as it is played (the path `lmrl serve`'s app processes take), typed like a person.
PLAYER = """
import sys, time
import envs
from data.session import PlaySession
from data.store import Store
db, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = Store(db)
steps = 0
t0 = time.monotonic()
for i in range(n):
    seed = 1000 * k + i
    plan = envs.run_episode(envs.make("maze-fo"), envs.make_policy("maze-fo", "optimal"), seed)
    session = PlaySession(store, "maze-fo", player=f"annotator-{k}", seed=seed)
    session.start()
    for t in plan.transitions:
        session.human_input(t.action.strip())
        steps += 1
    assert session.done and session.success
store.close()
print(steps, time.monotonic() - t0)
"""


@pytest.mark.slow
def test_eight_people_playing_through_the_session_layer_lose_no_step(tmp_path) -> None:
    db = tmp_path / "served.db"
    Store(db).close()  # the server opens (and migrates) the store before any app starts
    per_writer = 40
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", PLAYER, str(db), str(k), str(per_writer)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(8)
    ]
    outs = [w.communicate(timeout=300) for w in writers]
    assert [w.returncode for w in writers] == [0] * 8, [err for _, err in outs]
    assert not any("locked" in err or "busy" in err for _, err in outs)
    played = [int(out.split()[0]) for out, _ in outs]
    seconds = max(float(out.split()[1]) for out, _ in outs)
    store = Store(db)
    try:
        assert store.count() == 8 * per_writer
        assert store.count("status = ?", ["finished"]) == 8 * per_writer
        for k in range(8):
            assert store.count("player = ?", [f"annotator-{k}"]) == per_writer
        episodes = store.recent_episodes(8 * per_writer)
        rows = [store.steps(e["id"]) for e in episodes]
        assert (
            sum(len(r) for r in rows) == sum(e["n_steps"] for e in episodes) == sum(played)
        )  # no step lost
        assert all([s["idx"] for s in r] == list(range(len(r))) for r in rows)
    finally:
        store.close()
    print(
        f"\n8 writers through PlaySession: {sum(played)} steps in {seconds:.1f} s, {sum(played) / seconds:.0f} rows/s"
    )
