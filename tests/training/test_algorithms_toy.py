"""T4 (MC), T6 (ILQL fixed point) and T12 (Q-SFT) on the toy two-turn MDP with a tabular LM."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from training.config import TrainConfig  # noqa: E402
from training.offline.toy import VOCAB, TabularModel, char_encode, toy_dataset  # noqa: E402

S0 = char_encode("s\n")
S1 = {a: char_encode(f"s\n{a}\nx\n") for a in "AB"}


def fit(
    algo: str, steps: int, lr: float = 0.05, beta: bool = False, **cfg_kw
) -> tuple[TabularModel, TrainConfig]:
    torch.manual_seed(0)
    ds = toy_dataset(gamma=1.0, discount_mode="turn")
    if algo == "qsft":
        from training.offline.qsft import prepare_rewards

        prepare_rewards(ds, TrainConfig(algo="qsft"))
    cfg_kw = {"bc_weight": 1.0 if beta else 0.0, **cfg_kw}
    cfg = TrainConfig(algo=algo, gamma=1.0, discount_mode="turn", cql_weight=0.0, **cfg_kw)
    model = TabularModel(algo, beta=beta)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batch = ds.collate(range(len(ds)))  # the whole uniform dataset every step
    for _ in range(steps):
        loss, _ = model.loss(batch, cfg)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.update_targets(cfg.polyak_alpha)
    return model, cfg


def q_at(model: TabularModel, prefix: list[int], token: str, head: int = 0) -> float:
    return float(model.q.detach()[head, model.prefixes[tuple(prefix)], VOCAB[token]])


def v_at(model: TabularModel, prefix: list[int]) -> float:
    return float(model.v.detach()[model.prefixes[tuple(prefix)]])


def test_t4_mc_tabular_fit():
    model, _ = fit("mc", 600)
    assert q_at(model, S0, "B") == pytest.approx(0.5, abs=1e-3)
    assert q_at(model, S0, "A") == pytest.approx(0.0, abs=1e-3)
    assert q_at(model, S1["B"], "A") == pytest.approx(1.0, abs=1e-3)
    assert q_at(model, S1["B"], "B") == pytest.approx(0.0, abs=1e-3)


@pytest.mark.parametrize("target", ["heads_only"])
def test_t6_ilql_fixed_point_and_greedy_decoding(target):
    from training.losses import perturb_logits

    model, _ = fit("ilql", 1500, tau=0.7, polyak_alpha=0.1, target=target)
    for h in (0, 1):
        assert q_at(model, S0, "B", h) == pytest.approx(0.7, abs=0.02)
        assert q_at(model, S0, "A", h) == pytest.approx(0.0, abs=0.02)
    assert v_at(model, S1["B"]) == pytest.approx(0.7, abs=0.02)
    assert v_at(model, S0) == pytest.approx(0.49, abs=0.02)
    # value-guided greedy decoding (β = 16) says B, then A
    for prefix, want in ((S0, "B"), (S1["B"], "A")):
        i = model.prefixes[tuple(prefix)]
        q = torch.minimum(model.q[0, i], model.q[1, i])
        z = perturb_logits(model.logits[i], q, 16.0)
        legal = [VOCAB["A"], VOCAB["B"]]
        assert legal[int(torch.argmax(z[legal]))] == VOCAB[want]


@pytest.mark.slow
def test_t6_ilql_high_tau_approaches_max():
    model, _ = fit("ilql", 1500, tau=0.99, polyak_alpha=0.1)
    assert q_at(model, S0, "B") > 0.95


def test_t12_qsft_toy_greedy_is_b_then_a():
    model, _ = fit(
        "qsft", 400, polyak_alpha=0.1
    )  # settled by 300 steps (p(B|s0) 0.370 vs 0.372 at 1500)
    for prefix, want in ((S0, "B"), (S1["B"], "A")):
        p = torch.softmax(model.logits[model.prefixes[tuple(prefix)]], -1)
        assert int(torch.argmax(p)) == VOCAB[want]
    # with w in [0, 1], p(B|s0) is a conservative estimate of Q(s0, B) = 1 times π_β(B) = 0.5
    p_b = torch.softmax(model.logits.detach()[model.prefixes[tuple(S0)]], -1)[VOCAB["B"]]
    assert 0.05 < float(p_b) < 0.5


def _probs(model: TabularModel, prefix: list[int], table=None) -> torch.Tensor:
    logits = model.logits if table is None else table
    return torch.softmax(logits.detach()[model.prefixes[tuple(prefix)]], -1)


@pytest.mark.slow
def test_t12_qsft_ratio_target_makes_p_over_pi_beta_the_q_value():
    """With the ratio target p_θ ≈ π_β · Q plus the loss's spill-over, exactly: p*(a) = π_β(a) w(a) +
    Σ_{a'≠a} π_β(a') (1 − w(a')) / (|V| − 1), here |V| = 6 and π_β = 0.5 / 0.5 at each choice (uniform
    data). After a first A nothing wins, so w = 0.1 / 0.5 = 0.2 there (spill only); after B, saying A
    wins (w = 1, the clip). So p(B|s0) = 0.5 + 0.5 · 0.8 / 5 = 0.58 and p(A|s0) = 0.5 · 0.2 = 0.10: the
    ratio ranks B first by 5.8×. The default target multiplies each turn's value by π_β's 0.5 once
    more, so there p_θ(B|s0) stays far lower."""
    model, _ = fit("qsft", 600, polyak_alpha=0.1, beta=True, qsft_target="ratio")
    pi_beta = _probs(model, S0, model.beta_logits)
    assert float(pi_beta[VOCAB["B"]]) == pytest.approx(0.5, abs=0.01)
    p = _probs(model, S0)
    assert float(p[VOCAB["B"]]) == pytest.approx(0.58, abs=0.02)
    assert float(p[VOCAB["A"]]) == pytest.approx(0.10, abs=0.02)
    p1 = _probs(model, S1["B"])  # after B: A wins (w = 1), B loses (w = 0 + spill)
    assert float(p1[VOCAB["A"]]) == pytest.approx(0.5 + 0.5 / 5, abs=0.02)
    prob, _ = fit("qsft", 600, polyak_alpha=0.1, beta=True)
    assert float(_probs(prob, S0)[VOCAB["B"]]) < 0.45


def test_qsft_target_settings_are_checked():
    from training.config import resolve

    assert (
        resolve(TrainConfig(algo="qsft", task="maze-fo")).qsft_target == "ratio"
    )  # maze-fo's recipe
    assert resolve(TrainConfig(algo="qsft", task="textnav-fo")).qsft_target == "prob"  # the default
    with pytest.raises(ValueError, match="qsft_target must be one of prob, ratio"):
        resolve(TrainConfig(algo="qsft", task="maze-fo", qsft_target="ratios"), {"qsft_target"})
    for bad in (0.0, 1.5):
        with pytest.raises(ValueError, match="--qsft-support must be a probability"):
            resolve(TrainConfig(algo="qsft", task="maze-fo", qsft_support=bad), {"qsft_support"})
