"""The bisimulation loss (issue #17 §1; Hong, Dragan & Levine 2023): the pure loss on a toy MDP whose
on-policy bisimulation distances are known, the turn transitions it reads from a packed batch,
the ``--bisim-weight`` option of MC and ILQL, and the loss measured at the end of every run."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")

from training.losses import bisim_distance, bisim_loss, half_turn_partners  # noqa: E402

GAMMA = 0.9


def true_metric(nxt: list[int], r: torch.Tensor, gamma: float = GAMMA) -> torch.Tensor:
    """d(i, j) = |r_i - r_j| + γ d(next_i, next_j), by fixed-point iteration (a γ-contraction)."""
    d = torch.zeros(len(nxt), len(nxt))
    for _ in range(400):
        d = (r[:, None] - r[None, :]).abs() + gamma * d[nxt][:, nxt]
    return d


def fit_embeddings(nxt: list[int], r: torch.Tensor, steps: int) -> torch.Tensor:
    """Free embeddings (8-d) trained on the loss over every pair, the next states' as a target."""
    torch.manual_seed(0)
    n = len(nxt)
    emb = torch.nn.Parameter(torch.randn(n, 8))
    opt = torch.optim.Adam([emb], lr=0.03)
    nx, disc, term = torch.tensor(nxt), torch.full((n,), GAMMA), torch.zeros(n, dtype=torch.bool)
    for _ in range(steps):
        loss = sum(
            bisim_loss(emb, emb[nx], r, disc, term, (torch.arange(n) + k) % n)[0]
            for k in range(1, n)
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return bisim_distance(emb[:, None, :], emb[None, :, :])


def test_the_loss_learns_the_known_distances_of_a_toy_mdp():
    # four states step into an absorbing state 4 (reward 0): d(i, j) = |r_i - r_j| exactly
    nxt, r = [4, 4, 4, 4, 4], torch.tensor([0.2, 0.2, 1.0, 0.5, 0.0])
    want = true_metric(nxt, r)
    assert want[2, 3] == pytest.approx(0.5) and want[0, 1] == 0.0
    got = fit_embeddings(nxt, r, 1200)
    assert (got - want).abs().max() < 0.02, (got, want)


@pytest.mark.slow
def test_bisimilar_histories_collapse_and_the_rest_stay_apart():
    # 0 and 1: same reward, same next state (bisimilar); 2 and 3 differ by 1 now and nothing later
    nxt, r = [2, 2, 4, 4, 5, 5], torch.tensor([1.0, 1.0, 0.0, 1.0, 0.5, 0.0])
    want = true_metric(nxt, r)
    assert (
        want[0, 1] == 0.0
        and want[2, 3] == pytest.approx(1.0)
        and want[0, 2] == pytest.approx(1.855)
    )
    got = fit_embeddings(nxt, r, 1500)
    assert got[0, 1] < 0.02  # from random, distinct starting points
    off = ~torch.eye(6, dtype=torch.bool) & (want > 0)
    assert (got[off] > 0.4).all()
    assert (got - want).abs().max() < 0.3  # this metric is not exactly Euclidean: close, not equal


def test_the_loss_value_by_hand():
    z = torch.tensor([[0.0, 0.0], [2.0, 0.0]])  # distance 2/√2 = √2
    zn = torch.tensor([[0.0, 0.0], [0.0, 2.0]])  # next distance √2
    r, disc = torch.tensor([1.0, 0.0]), torch.tensor([0.5, 0.5])
    partner = torch.tensor([1, 0])
    loss, stats = bisim_loss(z, zn, r, disc, torch.tensor([False, False]), partner)
    target = 1.0 + 0.5 * 2**0.5
    assert float(loss) == pytest.approx((2**0.5 - target) ** 2, rel=1e-4)
    assert stats["bisim_target"] == pytest.approx(target, rel=1e-4)
    # two terminal transitions share the absorbing state: no next term
    loss_t, stats_t = bisim_loss(z, zn, r, disc, torch.tensor([True, True]), partner)
    assert stats_t["bisim_target"] == pytest.approx(1.0) and float(loss_t) == pytest.approx(
        (2**0.5 - 1) ** 2, rel=1e-4
    )
    # the next histories are a target: no gradient reaches them
    zn_p = zn.clone().requires_grad_(True)
    z_p = z.clone().requires_grad_(True)
    bisim_loss(z_p, zn_p, r, disc, torch.tensor([False, False]), partner)[0].backward()
    assert zn_p.grad is None and z_p.grad is not None and z_p.grad.abs().sum() > 0
    assert (
        bisim_loss(z[:1], zn[:1], r[:1], disc[:1], torch.tensor([False]), torch.tensor([0]))[0]
        == 0.0
    )


def test_partners_never_pair_a_transition_with_itself():
    for n in range(2, 40):
        p = half_turn_partners(n)
        assert sorted(p.tolist()) == list(range(n)) and not bool((p == torch.arange(n)).any())


def test_turn_transitions_of_a_packed_batch():
    from training.offline.common import turn_transitions
    from training.offline.toy import toy_dataset

    ds = toy_dataset(gamma=0.9)
    batch = ds.collate([1, 2])  # episodes (A, B) and (B, A): two turns each, reward 1 on (B, A)
    tr = turn_transitions(batch)
    assert tr["rows"].tolist() == [0, 0, 1, 1]
    ids = batch["input_ids"]
    # the history position holds the token before the turn's first action token
    for row, first, last in zip(tr["rows"], tr["first"], tr["last"], strict=True):
        assert bool(batch["action_mask"][row, first]) and bool(batch["action_mask"][row, last])
        assert first == 0 or not bool(batch["action_mask"][row, first - 1])
        assert int(ids[row, first]) == 5  # "\n": the end of the observation
    assert tr["reward"].tolist() == [0.0, 0.0, 0.0, 1.0]
    assert tr["discount"].tolist() == pytest.approx([0.9] * 4)
    assert tr["terminal"].tolist() == [False, True, False, True]
    # the first turn's next history is the position before the second turn's first action
    assert tr["next_pos"][0] == tr["first"][1] and tr["next_pos"][2] == tr["first"][3]


def test_the_option_is_for_value_learners_only():
    from training.config import TrainConfig, resolve

    resolve(TrainConfig(algo="ilql", task="maze-fo", bisim_weight=0.5), {"bisim_weight"})
    resolve(TrainConfig(algo="mc", task="maze-fo", bisim_weight=0.5), {"bisim_weight"})
    with pytest.raises(ValueError, match="mc and ilql"):
        resolve(TrainConfig(algo="bc", task="maze-fo", bisim_weight=0.5), {"bisim_weight"})
    with pytest.raises(ValueError, match=">= 0"):
        resolve(TrainConfig(algo="ilql", task="maze-fo", bisim_weight=-1.0), {"bisim_weight"})


@pytest.fixture(scope="module")
def maze(tmp_path_factory):
    from training.offline.toy import maze_store

    return maze_store(tmp_path_factory.mktemp("bisim") / "maze.db", episodes=12)


def _train(maze, tmp_path, algo: str, weight: float, steps: int = 12, **kw):
    from data.datasets import DatasetQuery
    from training.config import TrainConfig, resolve
    from training.offline.loop import train

    base = dict(
        algo=algo,
        task="maze-fo",
        max_steps=steps,
        batch_size=8,
        n_embd=32,
        n_head=2,
        vocab_size=300,
        eval_episodes=0,
        progress=False,
        log_every=1,
        lr=3e-3,
        bisim_weight=weight,
        **kw,
    )
    cfg = resolve(TrainConfig(**base), set(base) - {"algo", "task"})
    out = tmp_path / f"{algo}-{weight}-{kw.get('windows', '')}"
    res = train(cfg, maze, DatasetQuery(task="maze-fo"), out)
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    return res, [r for r in rows if r["kind"] == "train"]


@pytest.mark.parametrize("algo", ["ilql", "mc"])
def test_value_learners_train_with_the_loss_and_report_it(maze, tmp_path, algo):
    res, rows = _train(maze, tmp_path, algo, 1.0)
    assert all("bisim_loss" in r and r["bisim_loss"] >= 0 for r in rows)
    assert res["bisim_loss"] > 0  # measured on the data at the end
    res0, rows0 = _train(maze, tmp_path, algo, 0.0)
    assert "bisim_loss" not in rows0[-1] and res0["bisim_loss"] > 0  # measured without the term too


def test_step_windows_pair_histories_across_windows(maze, tmp_path):
    """With one window per step every turn's next history is the next window's prompt."""
    res, rows = _train(maze, tmp_path, "ilql", 1.0, steps=4, windows="step")
    assert rows and all(r["bisim_loss"] >= 0 for r in rows) and res["bisim_loss"] > 0


@pytest.mark.slow
def test_the_loss_lowers_the_bisimulation_loss_it_measures(maze, tmp_path):
    """Trained with the term, the representation ends closer to a bisimulation metric than
    without it (same data, seed and steps)."""
    with_term, _ = _train(maze, tmp_path, "mc", 1.0, steps=80)
    without, _ = _train(maze, tmp_path, "mc", 0.0, steps=80)
    assert with_term["bisim_loss"] < 0.5 * without["bisim_loss"], (
        with_term["bisim_loss"],
        without["bisim_loss"],
    )
