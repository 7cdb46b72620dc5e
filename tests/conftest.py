from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fake_endpoint import FakeProxy, FakeServer, make_certificate

from data.store import Store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "episodes.db"


@pytest.fixture
def store(db_path: Path):
    s = Store(db_path)
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _no_user_store(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test may touch a user's store: the default store is a fresh temporary file per test
    (a test that wants another one sets LMRL_DB or passes --db itself)."""
    monkeypatch.setenv("LMRL_DB", str(tmp_path_factory.mktemp("user-store") / "episodes.db"))
    # Nor the app's remembered dialog choices (a config file of the user's).
    monkeypatch.setenv("LMRL_CONFIG_DIR", str(tmp_path_factory.mktemp("user-config")))


@pytest.fixture
def server() -> Iterator[FakeServer]:
    """A fake OpenAI-compatible endpoint on 127.0.0.1 (``server.url``; script its replies)."""
    s = FakeServer()
    yield s
    s.close()


@pytest.fixture
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed (certificate, key) pair for 127.0.0.1, made with the openssl CLI."""
    return make_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture
def https_server(certificate: tuple[Path, Path]) -> Iterator[FakeServer]:
    """The fake endpoint over https with the self-signed ``certificate`` (``server.url``)."""
    s = FakeServer(tls=certificate)
    yield s
    s.close()


@pytest.fixture
def proxy() -> Iterator[FakeProxy]:
    """A tiny HTTP proxy on 127.0.0.1 (``proxy.url``; CONNECT for https; ``proxy.seen``)."""
    p = FakeProxy()
    yield p
    p.close()
