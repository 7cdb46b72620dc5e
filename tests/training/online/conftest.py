"""The online tests' toy bandit: a near-uniform tiny BC policy to start from (built once per test
module), and one torch thread while they run."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny models run fastest on one thread (and the 2-core CI box is shared)."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def bandit_init(_one_thread, tmp_path_factory):
    from training.online.toy import BANDIT, BANDIT_ACTIONS, register_bandit, tiny_checkpoint

    register_bandit()
    path = tmp_path_factory.mktemp("bandit") / "init"
    return tiny_checkpoint(path, BANDIT, [("s\n", a) for a in BANDIT_ACTIONS], bc_steps=150)
