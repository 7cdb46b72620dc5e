"""T2 (BC), T5 (ILQL pieces), T7 (perturbation identity) of docs/algorithms.md §11, on hand-built tensors."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from training import losses  # noqa: E402


def _batch(seed=0, b=3, t=7, v=6):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(b, t, v, generator=g, requires_grad=True)
    ids = torch.randint(0, v, (b, t), generator=g)
    mask = torch.rand(b, t - 1, generator=g) > 0.4
    mask[0, 0] = True
    return logits, ids, mask


def test_t2_bc_loss_is_mean_ce_over_action_tokens():
    logits, ids, m = _batch()
    ref = F.cross_entropy(logits[:, :-1][m], ids[:, 1:][m])
    assert losses.bc_loss(logits, ids, m).item() == pytest.approx(ref.item(), abs=1e-6)
    labels = ids[:, 1:].clone()
    labels[~m] = -100  # trl-style completion-only labels give the same number
    ref2 = F.cross_entropy(logits[:, :-1].reshape(-1, 6), labels.reshape(-1), ignore_index=-100)
    assert losses.bc_loss(logits, ids, m).item() == pytest.approx(ref2.item(), abs=1e-6)


def test_t2_no_gradient_at_observation_positions():
    logits, ids, m = _batch(1)
    losses.bc_loss(logits, ids, m).backward()
    g = logits.grad[:, :-1]
    assert torch.all(g[~m] == 0) and torch.any(g[m] != 0)
    assert torch.all(logits.grad[:, -1] == 0)


def test_t5_expectile_weights():
    d = torch.tensor([1.0, -1.0, 0.0])
    assert losses.expectile_weights(d, 0.7).tolist() == pytest.approx([0.7, 0.3, 0.7])


def test_t5_td_target_is_stop_grad_and_v_uses_min_target():
    m = torch.tensor([[True, True]])
    q1 = torch.zeros(1, 2, requires_grad=True)
    q2 = torch.zeros(1, 2, requires_grad=True)
    v = torch.zeros(1, 2, requires_grad=True)
    v_next = torch.tensor([[2.0, 0.0]], requires_grad=True)
    t = torch.minimum(torch.tensor([[1.0, 1.0]]), torch.tensor([[0.3, 0.3]]))
    loss, stats = losses.ilql_loss(
        q1, q2, v, t, v_next, torch.tensor([[0.0, 1.0]]), torch.tensor([[0.5, 0.5]]), m, tau=0.7
    )
    loss.backward()
    assert v_next.grad is None  # stop-grad through the bootstrap
    # y = r + d v' = [1, 1]; dL/dq1 = (q1 - y)/N
    assert q1.grad[0].tolist() == pytest.approx([-0.5, -0.5])
    assert stats["v_loss"] == pytest.approx(0.7 * 0.5 * 0.3**2)


def test_t5_cql_term_is_logsumexp_minus_q():
    q = torch.randn(2, 3, 5)
    a = torch.randint(0, 5, (2, 3))
    m = torch.ones(2, 3, dtype=torch.bool)
    ref = (torch.logsumexp(q, -1) - q.gather(-1, a.unsqueeze(-1)).squeeze(-1)).mean()
    assert losses.cql_term(q, a, m).item() == pytest.approx(ref.item(), abs=1e-6)


def test_t5_polyak():
    on, tg = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    w_on, w_tg = on.weight.detach().clone(), tg.weight.detach().clone()
    losses.polyak_(tg, on, 0.1)
    assert torch.allclose(tg.weight, 0.1 * w_on + 0.9 * w_tg)


def test_t5_next_value_gathering():
    from training.offline.common import gather_next

    v_all = torch.tensor([[10.0, 11.0, 12.0, 13.0]])
    batch = {"next_pos": torch.tensor([[2, -1, 3]]), "next_mult": torch.tensor([[1.0, 1.0, 0.0]])}
    out = gather_next(v_all, torch.tensor([7.0]), batch)
    assert out.tolist() == [[12.0, 7.0, 0.0]]


def test_t7_perturbation_identity():
    g = torch.Generator().manual_seed(3)
    logits, q = torch.randn(4, 9, generator=g), torch.randn(4, 9, generator=g)
    v = torch.randn(4, 1, generator=g)
    a = torch.softmax(losses.perturb_logits(logits, q, 2.5), -1)
    b = torch.softmax(losses.perturb_logits(logits, q, 2.5, v=v, normalise=True), -1)
    assert torch.allclose(a, b, atol=1e-6)
    assert torch.allclose(
        torch.softmax(losses.perturb_logits(logits, q, 0.0), -1), torch.softmax(logits, -1)
    )
    big = losses.perturb_logits(logits, q, 1e4)
    assert torch.equal(big.argmax(-1), q.argmax(-1))


def test_t12_qsft_loss_with_unit_weights_is_sft():
    logits, ids, m = _batch(4)
    w = torch.ones(m.shape)
    a = losses.qsft_loss(logits[:, :-1], ids[:, 1:], w, m)
    assert a.item() == pytest.approx(losses.bc_loss(logits, ids, m).item(), abs=1e-6)


def test_t12_qsft_tabular_optimum_matches_closed_form():
    g = torch.Generator().manual_seed(0)
    vocab = 5
    pi = torch.softmax(torch.randn(vocab, generator=g), 0)
    w = torch.rand(vocab, generator=g)
    z = torch.zeros(1, 1, vocab, requires_grad=True)
    opt = torch.optim.LBFGS([z], lr=1, max_iter=500, tolerance_grad=1e-12, tolerance_change=1e-14)
    acts = torch.arange(vocab).view(1, vocab)

    def closure():
        opt.zero_grad()
        # one "sample" per action, weighted by π_β through a float mask summing to 1
        loss = losses.qsft_loss(
            z.expand(1, vocab, vocab), acts, w.view(1, vocab), pi.view(1, vocab)
        )
        loss.backward()
        return loss

    opt.step(closure)
    p = torch.softmax(z.detach().view(-1), 0)
    spill = torch.tensor([(pi * (1 - w)).sum() - pi[a] * (1 - w[a]) for a in range(vocab)]) / (
        vocab - 1
    )
    assert torch.allclose(p, pi * w + spill, atol=1e-3)
