"""T4 (MC), T6 (ILQL fixed point) and T12 (Q-SFT) on the toy two-turn MDP with a tabular LM."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from training.config import TrainConfig  # noqa: E402
from training.offline.toy import VOCAB, TabularModel, char_encode, toy_dataset  # noqa: E402

S0 = char_encode("s\n")
S1 = {a: char_encode(f"s\n{a}\nx\n") for a in "AB"}


def fit(algo: str, steps: int, lr: float = 0.05, **cfg_kw) -> tuple[TabularModel, TrainConfig]:
    torch.manual_seed(0)
    ds = toy_dataset(gamma=1.0, discount_mode="turn")
    if algo == "qsft":
        from training.offline.qsft import prepare_rewards

        prepare_rewards(ds, TrainConfig(algo="qsft"))
    cfg = TrainConfig(algo=algo, gamma=1.0, discount_mode="turn", cql_weight=0.0, bc_weight=0.0, **cfg_kw)
    model = TabularModel(algo)
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


def test_t6_ilql_high_tau_approaches_max():
    model, _ = fit("ilql", 1500, tau=0.99, polyak_alpha=0.1)
    assert q_at(model, S0, "B") > 0.95


def test_t12_qsft_toy_greedy_is_b_then_a():
    model, _ = fit("qsft", 400, polyak_alpha=0.1)  # settled by 300 steps (p(B|s0) 0.370 vs 0.372 at 1500)
    for prefix, want in ((S0, "B"), (S1["B"], "A")):
        p = torch.softmax(model.logits[model.prefixes[tuple(prefix)]], -1)
        assert int(torch.argmax(p)) == VOCAB[want]
    # with w in [0, 1], p(B|s0) is a conservative estimate of Q(s0, B) = 1 times π_β(B) = 0.5
    p_b = torch.softmax(model.logits.detach()[model.prefixes[tuple(S0)]], -1)[VOCAB["B"]]
    assert 0.05 < float(p_b) < 0.5
