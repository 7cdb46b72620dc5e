"""PPO pure functions (docs/algorithms.md §11, T8, T9)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from training.online import ppo  # noqa: E402


def brute_gae(r, v, gamma, lam, last=0.0, done=True):
    k = len(r)
    vv = list(v) + [0.0 if done else last]
    deltas = [r[i] + gamma * vv[i + 1] - vv[i] for i in range(k)]
    return [sum((gamma * lam) ** (j - i) * deltas[j] for j in range(i, k)) for i in range(k)]


def test_t8_gae_matches_brute_force_and_limits():
    g = torch.Generator().manual_seed(0)
    r, v = torch.randn(7, generator=g), torch.randn(7, generator=g)
    for gamma, lam, done in [
        (0.9, 0.8, True),
        (1.0, 0.95, False),
        (0.99, 0.0, True),
        (0.97, 1.0, False),
    ]:
        adv, ret = ppo.gae(r, v, gamma, lam, last_value=0.7, done=done)
        want = brute_gae(r.tolist(), v.tolist(), gamma, lam, 0.7, done)
        assert torch.allclose(adv, torch.tensor(want), atol=1e-5)
        assert torch.allclose(ret, adv + v, atol=1e-6)
    # λ = 1: discounted returns minus V; λ = 0: TD(0)
    adv, _ = ppo.gae(r, v, 0.9, 1.0)
    disc = [sum(0.9 ** (j - i) * float(r[j]) for j in range(i, 7)) for i in range(7)]
    assert torch.allclose(adv, torch.tensor(disc) - v, atol=1e-5)
    adv, _ = ppo.gae(r, v, 0.9, 0.0, last_value=2.0, done=False)
    nxt = torch.cat([v[1:], torch.tensor([2.0])])
    assert torch.allclose(adv, r + 0.9 * nxt - v, atol=1e-6)
    # final bootstrap is (1 - done) · V_last
    a_done, _ = ppo.gae(r[:1], v[:1], 0.9, 0.95, last_value=5.0, done=True)
    a_open, _ = ppo.gae(r[:1], v[:1], 0.9, 0.95, last_value=5.0, done=False)
    assert float(a_open - a_done) == pytest.approx(0.9 * 5.0)


def test_t8_observation_tokens_are_skipped():
    g = torch.Generator().manual_seed(1)
    r, v = torch.randn(1, 5, generator=g), torch.randn(1, 5, generator=g)
    mask = torch.ones(1, 5, dtype=torch.bool)
    adv, ret = ppo.masked_gae(r, v, mask, 0.95, 0.9)
    # insert observation tokens (arbitrary values) between the actions
    r2 = torch.randn(1, 9, generator=g)
    v2 = torch.randn(1, 9, generator=g)
    m2 = torch.zeros(1, 9, dtype=torch.bool)
    pos = [0, 3, 4, 7, 8]
    m2[0, pos] = True
    r2[0, pos], v2[0, pos] = r[0], v[0]
    adv2, ret2 = ppo.masked_gae(r2, v2, m2, 0.95, 0.9)
    assert torch.allclose(ppo.compress_actions(adv2, m2)[0], adv[0], atol=1e-6)
    assert torch.allclose(ppo.compress_actions(ret2, m2)[0], ret[0], atol=1e-6)
    assert float(adv2[~m2].abs().sum()) == 0.0
    # done=False bootstraps from last_value
    a_open, _ = ppo.masked_gae(
        r, v, mask, 0.95, 0.9, done=torch.tensor([False]), last_value=torch.tensor([3.0])
    )
    a1, _ = ppo.gae(r[0], v[0], 0.95, 0.9, last_value=3.0, done=False)
    assert torch.allclose(a_open[0], a1, atol=1e-6)


def test_t9_first_minibatch_ratio_one_gradient_is_minus_a_grad_logp():
    logp = torch.tensor([[-1.0, -0.5, -2.0]], requires_grad=True)
    adv = torch.tensor([[1.0, -2.0, 0.5]])
    mask = torch.tensor([[True, False, True]])
    loss, st = ppo.policy_loss(logp, logp.detach(), adv, mask, clip=0.2)
    assert st["pg_clipfrac"] == 0.0 and st["approx_kl"] == pytest.approx(0.0)
    loss.backward()
    assert torch.allclose(logp.grad, -(adv * mask) / 2.0)


def test_t9_clipping_and_value_clip():
    old = torch.zeros(1, 2)
    lp = torch.log(torch.tensor([[1.3, 1.1]]))
    adv = torch.ones(1, 2)
    mask = torch.ones(1, 2, dtype=torch.bool)
    lp.requires_grad_(True)
    loss, st = ppo.policy_loss(lp, old, adv, mask, clip=0.2)
    assert st["pg_clipfrac"] == 0.5
    assert float(loss.detach()) == pytest.approx(-(1.2 + 1.1) / 2, abs=1e-5)
    loss.backward()
    assert float(lp.grad[0, 0]) == 0.0 and float(lp.grad[0, 1]) != 0.0
    # value clip: V moved 1.0 away from V_old, clipped to 0.2
    v = torch.tensor([[1.0]], requires_grad=True)
    lv, sv = ppo.value_loss(
        v, torch.zeros(1, 1), torch.tensor([[-1.0]]), torch.ones(1, 1, dtype=torch.bool), clip=0.2
    )
    assert float(lv.detach()) == pytest.approx(0.5 * 4.0)
    lv2, sv2 = ppo.value_loss(
        v, torch.zeros(1, 1), torch.tensor([[2.0]]), torch.ones(1, 1, dtype=torch.bool), clip=0.2
    )
    assert float(lv2.detach()) == pytest.approx(0.5 * 1.8**2) and sv2["v_clipfrac"] == 1.0


def test_t9_kl_shaping_only_on_actions_and_controllers():
    r = torch.tensor([[0.0, 0.0, 1.0]])
    lp, ref = torch.tensor([[-1.0, -1.0, -1.0]]), torch.tensor([[-2.0, -2.0, -3.0]])
    mask = torch.tensor([[False, True, True]])
    out = ppo.kl_shaped_rewards(r, lp, ref, mask, beta=0.1)
    assert torch.allclose(out, torch.tensor([[0.0, -0.1, 1.0 - 0.2]]))
    fixed = ppo.kl_controller(0.001)
    assert fixed.update(5.0, 32) == 0.001
    n, h = 32, 1000
    for kl in (0.0, 0.05, 0.1, 0.2, 10.0):
        c = ppo.kl_controller(1.0, target=0.1, horizon=h)
        mult = c.update(kl, n)
        assert 1 - 0.2 * n / h - 1e-9 <= mult <= 1 + 0.2 * n / h + 1e-9
    c = ppo.kl_controller(1.0, target=0.1, horizon=h)
    assert c.update(10.0, n) == pytest.approx(1 + 0.2 * n / h)


def test_whitening_global_equals_local():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 6, generator=g)
    m = torch.rand(4, 6, generator=g) > 0.3
    full = ppo.whiten(x, m)
    mom = ppo.masked_moments(x[:2], m[:2]) + ppo.masked_moments(x[2:], m[2:])
    parts = torch.cat([ppo.whiten(x[:2], m[:2], mom), ppo.whiten(x[2:], m[2:], mom)])
    assert torch.allclose(full, parts, atol=1e-6)
    vals = x[m]
    assert float(full[m].mean()) == pytest.approx(0.0, abs=1e-5)
    assert float(full[m].std()) == pytest.approx(1.0, abs=1e-4)
    assert vals.numel() > 0


def test_token_and_utterance_credit_on_packed_episodes():
    from envs.core import Transition
    from training.datasets.windows import PackedDataset, episode_windows
    from training.offline.toy import VOCAB, char_encode
    from training.online.rollout import RolloutEpisode
    from training.online.update import advantages, utterances

    ep = RolloutEpisode(
        "toy",
        0,
        "s\n",
        [
            Transition("AB\n", "x\n", 0.0, False, False, {}),
            Transition("A\n", "", 1.0, True, False, {}),
        ],
    )
    wins = episode_windows(ep.first_observation, ep.pairs(), True, "episode", 0)
    ds = PackedDataset(wins, char_encode, VOCAB["<pad>"])
    utts = utterances(ds)[0]
    assert utts == [[2, 3, 4], [7, 8]]  # "s\n" | "AB\n" | "x\n" | "A\n"
    n = ds.n_tokens
    lp, ref, v = torch.zeros(n), torch.zeros(n), torch.arange(n, dtype=torch.float32) / 10
    lp[2], ref[2] = -1.0, -2.0  # KL 1 on the first token of the first utterance
    adv, ret, vmask, kl = advantages(ds, lp, ref, v, beta=0.5, gamma=1.0, lam=1.0, credit="token")
    pos = [2, 3, 4, 7, 8]
    r = torch.tensor([-0.5, 0, 0, 0, 1.0])
    want, _ = ppo.gae(r, v[pos], 1.0, 1.0)
    assert torch.allclose(adv[pos], want) and vmask[pos].all() and int(vmask.sum()) == 5
    adv_u, ret_u, vmask_u, _ = advantages(
        ds, lp, ref, v, beta=0.5, gamma=1.0, lam=1.0, credit="utterance"
    )
    turn, _ = ppo.gae(torch.tensor([-0.5, 1.0]), v[[2, 7]], 1.0, 1.0)
    assert torch.allclose(adv_u[[2, 3, 4]], turn[0].expand(3)) and torch.allclose(
        adv_u[[7, 8]], turn[1].expand(2)
    )
    assert vmask_u.nonzero().flatten().tolist() == [2, 7]
    assert float(ret_u[2]) == pytest.approx(float(turn[0] + v[2]))
