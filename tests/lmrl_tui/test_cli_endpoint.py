"""``lmrl generate`` with a model endpoint that fails: one line, exit 2, finished episodes kept."""

from __future__ import annotations

import functools
import socket

import pytest
from support.fake_endpoint import FakeServer

from data.store import Store
from envs.players import agents
from envs.players.remote import ChatEndpointAgent
from lmrl_tui.cli import main


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The endpoint agents the CLI makes retry without waiting (the tests stay fast)."""
    monkeypatch.setitem(
        agents._LOADERS, "http", functools.partial(ChatEndpointAgent, sleep=lambda s: None)
    )


def _generate(db, url: str, episodes: int) -> int:
    return main(
        [
            "--db",
            str(db),
            "generate",
            "twenty-questions",
            "--episodes",
            str(episodes),
            "--partner",
            f"http:tiny@{url}",
            "--quiet",
        ]
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_dead_endpoint_is_one_line_and_exit_2(tmp_path, capsys):
    db = tmp_path / "e.db"
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    assert _generate(db, url, 3) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("lmrl: error: cannot reach the model endpoint")
    assert url in err and "Traceback" not in err and out == ""


def test_an_endpoint_that_dies_after_two_episodes_leaves_them_in_the_store(tmp_path, capsys):
    server = FakeServer()
    server.default = (200, {"choices": [{"message": {"content": "Yes."}}]})
    server.die_at_seed = 2  # the oracle is reset with the episode's seed: episodes 0 and 1 finish
    db = tmp_path / "e.db"
    try:
        assert _generate(db, server.url, 5) == 2
    finally:
        server.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot reach the model endpoint" in err
    assert f"kept the 2 episodes that finished in {db}" in err
    s = Store(db)
    try:
        assert sorted(ep["seed"] for ep in s.recent_episodes(10)) == [0, 1]
        assert all(ep["status"] == "finished" for ep in s.recent_episodes(10))
    finally:
        s.close()
