"""T1 (tokenisation and masks) and T3 (%BC selection) of docs/algorithms.md §11."""

from __future__ import annotations

import pytest
import torch

pytest.importorskip("torch")

from training.datasets.windows import PackedDataset, episode_windows, select_top  # noqa: E402
from training.offline.toy import VOCAB, char_encode, toy_dataset  # noqa: E402


def test_t1_shifted_masks_rewards_and_next_positions():
    ds = toy_dataset()
    b = ds.collate([2])  # "s\n" "B\n" "x\n" "A\n" -> reward 1
    ids = b["input_ids"][0].tolist()
    assert ids == char_encode("s\nB\nx\nA\n")
    # position t predicts x_{t+1}: actions are tokens 2,3 and 6,7
    assert b["action_mask"][0].tolist() == [False, True, True, False, False, True, True]
    assert b["rewards"][0].tolist() == [0, 0, 0, 0, 0, 0, 1.0]
    pos = b["next_pos"][0].tolist()
    assert pos[1] == 2 and pos[2] == 5 and pos[5] == 6  # the observation "x\n" is skipped
    assert b["next_mult"][0, 6].item() == 0.0  # done: no bootstrap after the last action
    assert b["next_mult"][0, 2].item() == 1.0


def test_t1_rewards_only_on_last_action_token():
    ds = toy_dataset()
    for s, e in ds.window_slices():
        rew, act = ds.rew[s:e], ds.act[s:e]
        nz = torch.nonzero(rew).squeeze(1).tolist()
        for p in nz:  # an action token that ends its segment (the next token is not an action)
            assert act[p] and (p + 1 == e - s or not act[p + 1])


def test_t1_not_done_bootstraps_from_last_token():
    w = episode_windows("s\n", [("A\n", "x\n", 0.0)], ended=False)
    ds = PackedDataset(w, char_encode, 0)
    b = ds.collate([0])
    last = b["action_mask"][0].nonzero().max().item()
    assert b["next_mult"][0, last] == 1.0
    assert b["next_pos"][0, last] == len(char_encode("s\nA\nx\n")) - 1


def test_t1_step_windows_chain_to_the_next_prompt():
    w = episode_windows("s\n", [("A\n", "x\n", -1.0), ("B\n", "Success\n", 0.0)], True, "step")
    assert [x.next_prompt for x in w] == ["x\n", None] and [x.done for x in w] == [False, True]
    enc = {**VOCAB, "S": 6, "u": 7, "c": 8, "e": 9}
    ds = PackedDataset(w, lambda t: [enc[c] for c in t], 0, gamma=0.9, discount_mode="turn")
    b = ds.collate([0, 1])
    assert b["next_pos"][0, 2].item() == -1 and b["next_mult"][0, 2] == 1.0
    assert b["next_mult"][1, 2] == 0.0
    assert b["next_input_ids"][0].tolist()[:2] == [4, 5] and b["next_last"][0] == 1
    # MC return across the chain: G = -1 + 0.9 * 0 at the first action's last token
    assert ds.ret[3].item() == pytest.approx(-1.0)


def test_t1_returns_to_go_both_discount_modes():
    for mode, g2 in (("turn", 0.5), ("token", 0.5**2)):
        ds = toy_dataset(gamma=0.5, discount_mode=mode)
        s, _ = ds.window_slices()[2]
        ret = ds.ret[s : s + 8].tolist()
        # tokens: s \n B \n x \n A \n ; reward 1 on the final "\n"
        assert ret[7] == pytest.approx(1.0) and ret[6] == pytest.approx(
            1.0 if mode == "turn" else 0.5
        )
        assert ret[3] == pytest.approx(g2)


def test_t1_segmentwise_bpe_ids_equal_whole_string_ids():
    from training.model.tokenization import build_tokenizer, encode

    segs = [
        "The goal is at position 8, 6. Your current position is at position 1, 1.\n",
        "move right\n",
        "There are walls to your left, above you.\n",
        "move up\n",
        "Success\n",
    ]
    tok = build_tokenizer(segs * 3, vocab_size=300)
    whole = encode(tok, "".join(segs))
    assert sum((encode(tok, s) for s in segs), []) == whole
    assert tok.decode(whole) == "".join(segs)


def test_long_history_windows_keep_their_tokens_and_returns_restart_per_episode():
    """Histories longer than the tokenisation cache keeps (each encoded once more as the next
    window's prompt) still give each window the tokens of its own texts; the returns-to-go,
    computed at the action tokens only, restart at each episode."""
    obs = "sx" * 150 + "\n"  # 301 characters: the second history is past the cache's limit
    calls: list[str] = []

    def enc(text):
        calls.append(text)
        return [ord(c) for c in text]

    wins = []
    for e, rewards in enumerate(([0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0])):
        pairs = [(f"{'AB'[e]}\n", obs, r) for r in rewards]
        wins += episode_windows(obs, pairs, True, "history", episode=e)
    ds = PackedDataset(wins, enc, 0, gamma=0.5, max_length=10_000)
    for k, w in enumerate(wins):
        s, t = ds.window_slices()[k]
        assert ds.ids[s:t].tolist() == [ord(c) for c in w.segments[0][0] + w.segments[1][0]]
        n = ds.next_offsets[k + 1] - ds.next_offsets[k]
        assert n == (len(w.next_prompt) if w.next_prompt else 0)
    assert max(calls.count(t) for t in set(calls) if len(t) > 512) == 1  # the next prompt re-used
    returns = [ds.ret[t - 1].item() for _, t in ds.window_slices()]  # at each window's last token
    assert returns == pytest.approx([0.25, 0.5, 1.0, 0.0, 1.0, 0.0, 0.0])


def test_t3_percent_keeps_ties_and_count_is_exact():
    assert select_top([1, 2, 2, 3], "percent", 50) == [1, 2, 3]
    assert len(select_top([1, 2, 2, 3], "count", 2)) == 2
    assert select_top([1, 2, 2, 3], "threshold", 3) == [3]


def test_t3_store_query_top_percent_and_wins(tmp_path):
    from data.datasets import DatasetQuery
    from training.datasets.source import select_ids
    from training.offline.toy import maze_store

    store = maze_store(tmp_path / "m.db", episodes=60)  # 2 of the first 60 reach the goal
    all_ids = select_ids(store, DatasetQuery(task="maze-fo"))
    ties = select_ids(store, DatasetQuery(task="maze-fo", top_percent=10))
    assert ties == all_ids  # the 90th percentile is -101 and ties are kept
    top = select_ids(store, DatasetQuery(task="maze-fo", top_percent=3))
    wins = select_ids(store, DatasetQuery(task="maze-fo", wins_only=True))
    assert top == wins and len(wins) == 2
    rets = {r[0]: r[1] for r in store.db.execute("SELECT id, return FROM episodes").fetchall()}
    assert min(rets[i] for i in top) >= max(rets[i] for i in all_ids if i not in top)


def test_deduplicate_keeps_one_copy_with_the_mean_return():
    w = episode_windows("s\n", [("A\n", "x\n", 0.0), ("A\n", "", 1.0)], True, "episode", 0)
    w += episode_windows("s\n", [("A\n", "x\n", 0.0), ("A\n", "", 1.0)], True, "episode", 1)
    w += episode_windows("s\n", [("B\n", "x\n", 0.0)], False, "step", 2)
    ds = PackedDataset(w, char_encode, 0)
    assert ds.deduplicate() == 2 and len(ds) == 2
    b = ds.collate([0, 1])
    assert b["input_ids"][0].tolist() == char_encode("s\nA\nx\nA\n")
    assert b["returns"][0, -1].item() == pytest.approx(1.0)
    assert b["next_input_ids"][1].tolist() == char_encode("x\n")  # not ended: bootstrap


def test_truncation_drop_bootstraps_from_the_state_before_the_timeout(tmp_path):
    from data import EpisodeRecord, StepRecord, Store, Who
    from training.datasets.source import load_windows

    store = Store(tmp_path / "t.db")
    steps = [StepRecord("A\n", "x\n", -1.0), StepRecord("B\n", "Failure\n", -1.0, truncated=True)]
    (eid,) = store.write_episodes(
        [EpisodeRecord("maze-fo", 1, 0, "s\n", steps, Who("scripted", "b"))]
    )
    term = load_windows(store, [eid], "step", "terminal")
    assert len(term) == 2 and term[-1].done
    drop = load_windows(store, [eid], "step", "drop")
    assert len(drop) == 1 and not drop[0].done and drop[0].next_prompt == "x\n"


def test_history_windows_chain_whole_histories_and_keep_the_action_when_cut():
    w = episode_windows("s\n", [("A\n", "x\n", 0.0), ("B\n", "", 1.0)], True, "history")
    assert [x.segments[0][0] for x in w] == ["s\n", "s\nA\nx\n"]
    assert [x.next_prompt for x in w] == ["s\nA\nx\n", None] and [x.done for x in w] == [
        False,
        True,
    ]
    full = PackedDataset(w, char_encode, 0, max_length=64)
    assert full.collate([1])["input_ids"][0].tolist() == char_encode("s\nA\nx\nB\n")
    cut = PackedDataset(w, char_encode, 0, max_length=3)  # cut from the left: the action stays
    b = cut.collate([0, 1])
    assert b["input_ids"][1].tolist() == char_encode("x\nB\n")[-3:]
    assert b["action_mask"][1].tolist()[-2:] == [True, True]
    assert b["next_mult"][1, -1] == 0.0 and cut.done.tolist() == [False, True]  # still the end
    assert b["next_input_ids"][0].tolist() == char_encode("s\nA\nx\n")[-3:]
    # an episode window is cut from the right and no longer ends the episode
    ep = PackedDataset(
        episode_windows("s\n", [("A\n", "x\n", 0.0), ("B\n", "", 1.0)], True),
        char_encode,
        0,
        max_length=3,
    )
    assert ep.collate([0])["input_ids"][0].tolist() == char_encode("s\nA") and not ep.done[0]
    with pytest.raises(ValueError, match="windows must be one of"):
        episode_windows("s\n", [("A\n", "x\n", 0.0)], True, "turn")


def test_history_window_prompts_are_what_the_agent_reads(tmp_path):
    """textnav-fo trains on history windows: each window's prompt is the task's history at that
    step, as the store replays it (the text a checkpoint agent reads when it acts)."""
    import envs
    from data import Store
    from data.generate import generate
    from envs.core import history_to_str
    from training.datasets.source import load_windows

    assert envs.spec("textnav-fo").window == "history"
    store = Store(tmp_path / "t.db")
    generate(store, "textnav-fo", envs.make_policy("textnav-fo", "behaviour"), 3, seed=100)
    ids = [r[0] for r in store.db.execute("SELECT id FROM episodes ORDER BY id").fetchall()]
    windows = load_windows(store, ids, "history")
    replay = envs.make_policy("textnav-fo", "behaviour")
    prompts = []
    for i in range(3):
        task = envs.make("textnav-fo")
        task.reset(seed=100 + i)
        replay.reset(task, seed=100 + i)
        while True:
            prompts.append(history_to_str(task.history()))
            st = task.step(replay.act(task.history()))
            if st.terminated or st.truncated:
                break
    assert [w.segments[0][0] for w in windows] == prompts


def test_a_run_is_told_how_many_windows_were_cut():
    w = episode_windows("s\n", [("A\n", "x\n", 0.0), ("B\n", "", 1.0)], True, "episode")
    assert PackedDataset(w, char_encode, 0, max_length=64).cut_note(64, "episode") is None
    note = PackedDataset(w, char_encode, 0, max_length=3).cut_note(3, "episode")
    assert note.startswith(
        "note: 1 of 1 training windows are longer than --max-length 3 (longest 8 tokens)"
    )
    assert "--windows history" in note
    h = episode_windows("s\n", [("A\n", "x\n", 0.0), ("B\n", "", 1.0)], True, "history")
    assert "beginning" in PackedDataset(h, char_encode, 0, max_length=5).cut_note(5, "history")


@pytest.mark.slow
@pytest.mark.parametrize("task", ["twenty-questions", "guess-city"])
def test_the_question_games_default_windows_keep_whole_episodes(store, task):
    """The reproduction's data (2,000 behaviour episodes, one window per episode): at the task's
    default --max-length no episode loses its end (at 256, 56 % of twenty-questions' and 75 % of
    guess-city's did: their final guess and reward were never trained on)."""
    import envs
    from data.datasets import DatasetQuery
    from data.generate import generate
    from training.config import TrainConfig, resolve
    from training.offline.prepare import prepare

    generate(store, task, envs.make_policy(task, "behaviour"), 2000, seed=100_000)
    cfg = resolve(TrainConfig(algo="bc", task=task))
    prep = prepare(cfg, store, DatasetQuery(task=task))
    assert cfg.windows == "episode" and len(prep.dataset) == 2000
    assert prep.dataset.cut_note(cfg.max_length, cfg.windows) is None, prep.dataset.longest
