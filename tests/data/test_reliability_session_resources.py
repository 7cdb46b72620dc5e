"""Resource hygiene of recorded play: a session that crashed mid-episode (its agent raised, the
session was dropped without being closed, as when a worker dies), sessions played from worker
threads that ended, and a closed store leave no child process (Stockfish), thread or file
descriptor behind."""

from __future__ import annotations

import gc
import threading

import pytest
from support.processes import Baseline

import envs
from data.session import PlaySession
from data.store import Store

FD_SLACK = 0


class CrashingAgent:
    """A scripted chess player that fails on its third move."""

    kind, name = "scripted", "crashing"

    def __init__(self) -> None:
        self.inner = envs.make_policy("chess", "random")
        self.moves = 0

    def reset(self, task, seed=None) -> None:
        self.inner.reset(task, seed)

    def act(self, history) -> str:
        self.moves += 1
        if self.moves == 3:
            raise RuntimeError("the model crashed")
        return self.inner.act(history)


def _warm(db) -> None:
    store = Store(db)
    s = PlaySession(store, "chess", agent=envs.make_policy("chess", "random"), seed=0)
    s.start()
    s.agent_step()
    s.abandon()
    store.close()
    gc.collect()


@pytest.mark.stockfish
def test_a_crashed_session_leaves_no_engine_thread_or_file(tmp_path) -> None:
    db = tmp_path / "crash.db"
    _warm(db)
    before = Baseline()
    store = Store(db)
    session = PlaySession(store, "chess", agent=CrashingAgent(), seed=5)
    session.start()
    session.agent_step()
    session.agent_step()
    assert before.new_children(), "Stockfish answers the agent's moves"
    with pytest.raises(RuntimeError, match="crashed"):
        session.agent_step()
    eid = session.episode_id
    del session  # dropped without abandon(): what a dead worker leaves
    gc.collect()
    assert [e["id"] for e in store.unfinished_episodes()] == [eid]
    store.close()
    assert before.leaks(fd_slack=FD_SLACK) == {}


@pytest.mark.stockfish
def test_sessions_played_in_worker_threads_release_their_connections(tmp_path) -> None:
    db = tmp_path / "threads.db"
    _warm(db)
    store = Store(db)
    before = Baseline()
    errors: list[BaseException] = []

    def play(seed: int) -> None:
        try:
            s = PlaySession(store, "chess", agent=envs.make_policy("chess", "random"), seed=seed)
            s.start()
            for _ in range(3):
                s.agent_step()
            s.abandon()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    for seed in range(8):  # one after another, like the app's workers
        th = threading.Thread(target=play, args=(seed,))
        th.start()
        th.join()
    gc.collect()
    assert errors == []
    # Each ended thread's connection is closed. SQLite keeps the file descriptor of a closed
    # connection while another one of this process holds a lock on the file (the main thread's,
    # in WAL mode) and reuses it for the next: one at most, however many threads came and went.
    leaks = before.leaks(fd_slack=1)
    assert leaks == {}
    assert store.count(task="chess") == 9
    store.close()
    assert before.leaks(fd_slack=FD_SLACK) == {}  # closing the store lets go of it too
