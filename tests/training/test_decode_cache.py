"""Batched decoding's caches and GPT-2's lean forward (issue #12): decoding many prompts at once,
each turn reusing the episode's cache, writes what one prompt at a time writes (Decoder.sample, the
reference) on every path: the lean GPT-2 forward, transformers' own forward, caches of
transformers without cache layers, and a model that is not GPT-2 (Llama, grouped-query heads)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from training.decoding import kv_cache as decode_cache  # noqa: E402
from training.decoding.free_text import RowState  # noqa: E402
from training.decoding.kv_cache import RowsCache  # noqa: E402
from training.model import fast_gpt2  # noqa: E402

TEXT = "abcdefghijklmnopqrstuvwxyz ?.,\n"


def _decoder(kind: str, algo: str = "bc", max_new_tokens: int = 10):
    from transformers import LlamaConfig, LlamaForCausalLM

    from training.config import TrainConfig
    from training.decoding.decoder import Decoder
    from training.model.policy_value import PolicyValueModel, tiny_lm
    from training.model.tokenization import build_tokenizer, newline_id

    torch.manual_seed(3)
    tok = build_tokenizer([TEXT], kind="byte")
    if kind == "gpt2":
        lm = tiny_lm(len(tok), 128, 2, 32, 4, 0.0, tok.pad_token_id, tok.eos_token_id)
    else:
        cfg = LlamaConfig(
            vocab_size=len(tok),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=128,
            pad_token_id=tok.pad_token_id,
            tie_word_embeddings=False,
        )
        lm = LlamaForCausalLM(cfg)
    with torch.no_grad():  # weights far from their small initial ones, "\n" likely in some contexts
        for p in lm.parameters():  # only: the utterances have many lengths
            if p.dim() > 1:
                p.normal_(0, 0.5)
        lm.get_output_embeddings().weight[newline_id(tok)] *= 3
    model = PolicyValueModel(lm, algo)
    cfg = TrainConfig(algo=algo, task="maze-fo", tokenizer="byte", decoding="greedy", max_length=96)
    return Decoder(model, tok, cfg, max_new_tokens=max_new_tokens)


def _turns(dec, greedy: bool, batched: bool, long: bool, n_turns: int = 3):
    """Three turns of episodes whose prompts grow by the utterance and an answer. With ``long`` a
    fifth one grows past the 96-token window, so it is fed whole while the others feed a few tokens
    (two prefill groups); without, the rows are prefilled together and decode on in that batch."""
    prompts = ["a\n", "the goal is near\n", "b c d\n", "zz\n"] + (
        ["what is it?\n" * 7] if long else []
    )
    gens = [torch.Generator().manual_seed(100 + i) for i in range(len(prompts))]
    states = [RowState() for _ in prompts]
    said = []
    for turn in range(n_turns):
        if batched:
            texts, _ = dec.sample_batch(prompts, gens, greedy=greedy, states=states)
            # every episode keeps its fed tokens' keys and values for the next turn
            assert all(
                st.tokens and [kv.shape[3] for kv in st.kv] == [len(st.tokens)] * len(st.kv)
                for st in states
            )
        else:
            texts = [dec.sample(p, g, greedy=greedy) for p, g in zip(prompts, gens, strict=True)]
        said.append(texts)
        prompts = [p + t + f"yes {turn}\n" for p, t in zip(prompts, texts, strict=True)]
    return said


def _check(dec, greedy: bool = True) -> None:
    for long in (False, True):
        one = _turns(dec, greedy, batched=False, long=long)
        many = _turns(dec, greedy, batched=True, long=long)
        assert many == one
        lengths = {len(t) for texts in one for t in texts}
        assert len(lengths) > 2, (
            "every utterance as long as the others: the rows never leave the batch apart"
        )


@pytest.fixture(autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.mark.parametrize("greedy", [True, False], ids=["greedy", "sampled"])
def test_gpt2_lean_forward_decodes_as_one_prompt_at_a_time(greedy, monkeypatch):
    calls = []
    step = fast_gpt2.step
    monkeypatch.setattr(fast_gpt2, "step", lambda *a, **k: calls.append(1) or step(*a, **k))
    _check(_decoder("gpt2"), greedy)
    assert calls, "the lean forward was not used"


def test_transformers_forward_and_caches_without_layers_decode_alike(monkeypatch):
    dec = _decoder("gpt2", algo="mc")  # with a value head: value-guided sampling
    monkeypatch.setattr(fast_gpt2, "supports", lambda lm, cache: False)
    _check(dec)
    monkeypatch.setattr(decode_cache, "_HAS_LAYERS", [False])  # transformers before cache layers
    _check(dec)


def test_llama_with_grouped_query_heads_decodes_as_one_prompt_at_a_time():
    _check(_decoder("llama"))


@pytest.mark.parametrize("last_only", [True, False], ids=["last", "every-position"])
def test_lean_forward_equals_transformers_on_padded_rows_with_gaps(last_only, monkeypatch):
    """Rows with cached tokens packed right, new tokens left-padded: the lean forward's logits and
    final hidden states (the last position's, or every real one's) and cached keys equal
    transformers' forward on the same inputs."""
    from training.decoding.free_text import _cached_step

    dec = _decoder("gpt2")
    lm = dec.model.lm
    rows = [torch.randn(2, 2, 4, n, 8) for n in (5, 0, 3)]
    attn = torch.tensor(
        [[1] * 5 + [0, 1, 1, 1], [0] * 5 + [0, 0, 1, 1], [0, 0, 1, 1, 1, 0, 1, 1, 1]]
    )
    pos = torch.tensor([[0, 5, 6, 7], [0, 0, 0, 1], [0, 3, 4, 5]])
    ids = torch.randint(3, 20, (3, 4))
    outs = []
    for lean in (True, False):
        cache = RowsCache.merge(rows, [5, 0, 3], 2, room=4)
        if lean:
            out = fast_gpt2.step(lm, ids, cache.model_cache(), attn, pos, last_only)
        else:
            monkeypatch.setattr(
                fast_gpt2, "supports", lambda lm, cache: False
            )  # transformers' forward
            out, _ = _cached_step(
                lm,
                ids,
                cache.model_cache(),
                hidden=True,
                last_only=last_only,
                attention_mask=attn,
                position_ids=pos,
            )
        cache.absorb(out.get("cache"))
        real = [
            cache.row(j, [(c, c + 1) for c in range(9) if attn[j, c]]) for j in range(3)
        ]  # padding aside
        new = attn[:, -4:].bool() if not last_only else torch.ones(3, 1, dtype=torch.bool)
        outs.append(
            (
                out.logits[:, -new.shape[1] :][new],
                out.hidden_states[-1][:, -new.shape[1] :][new],
                *real,
            )
        )
    for a, b in zip(*outs, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_rows_cache_packs_takes_and_keeps_rows():
    rows = [torch.randn(2, 3, 2, n, 4) for n in (4, 2, 6)]
    cache = RowsCache.merge(rows, [4, 2, 6], 3, room=3)
    assert cache.n == 6 and cache.buf.shape == (2, 3, 3, 2, 9, 4)
    assert torch.equal(cache.row(1, [(4, 6)]), rows[1])
    assert not cache.buf[:, :, 1, :, :4].any()  # the padding is zeros
    assert torch.equal(cache.row(0, [(2, 3), (3, 6)]), rows[0][:, :, :, :4])
    cache.select(torch.tensor([2, 0]))
    assert torch.equal(cache.row(0, [(0, 6)]), rows[2]) and torch.equal(
        cache.row(1, [(2, 6)]), rows[0]
    )
    empty = RowsCache.merge([None, None], [0, 0], 3, room=2)
    assert empty.buf is None and empty.n_layers == 3


def test_encode_many_gives_each_text_its_own_ids():
    """The fast tokenizer's batch call without offsets gives every text the ids it has alone, and a
    tokenizer with truncation of its own goes through transformers' call (which turns it off)."""
    from training.model.tokenization import build_tokenizer, encode, encode_many

    tok = build_tokenizer(["the goal is near\nmove up\n" * 20, TEXT], vocab_size=300)
    texts = ["", "move up\n", "the goal is near\n\n\nyes 0\n" * 9, " z?\n"]
    assert encode_many(tok, texts) == [encode(tok, t) for t in texts]
    tok._tokenizer.enable_truncation(4)
    assert (
        encode_many(tok, texts) == [encode(tok, t) for t in texts]
        and len(encode_many(tok, texts)[2]) > 4
    )


@pytest.mark.parametrize("algo", ["bc", "mc"])
def test_reranker_scores_are_each_actions_own(algo, monkeypatch):
    """The reranker's scores of many actions (their token positions taken for all rows at once)
    are those of each (prompt, action) fed alone: MC's last-token Q plus the π_β term, BC's summed
    log-probability; and the sampling policy's log-probability of each."""
    import torch.nn.functional as F

    step = fast_gpt2.step
    dec = _decoder("gpt2", algo=algo)
    dec.cfg.logit_weight = 0.5
    lean_calls = []
    monkeypatch.setattr(
        fast_gpt2, "step", lambda *a, **k: lean_calls.append(a[5:]) or step(*a, **k)
    )
    with torch.no_grad():  # a Q head that is not all zeros
        for p in dec.model.q_heads.parameters():
            p.normal_(0, 0.5)
    prompt, actions = "the goal is near\n", ["a\n", "move up\n", "zz?\n", "b c d e f g\n"]
    scores, logps = dec.action_scores(prompt, actions)
    assert (False,) in lean_calls, "the action rows were not fed through the lean forward"
    for (p_ids, a_ids), s, lp in zip(dec._rows(prompt, actions), scores, logps, strict=True):
        at = torch.tensor([[len(p_ids) - 1 + j for j in range(len(a_ids))]])
        guided, logp_beta, score = dec._forward(
            torch.tensor([p_ids + a_ids]),
            torch.ones(1, len(p_ids) + len(a_ids), dtype=torch.long),
            at,
        )
        tgt = torch.tensor(a_ids).unsqueeze(-1)
        per_token = score[0].gather(-1, tgt).squeeze(-1)
        want = (
            per_token[-1] + 0.5 * logp_beta[0].gather(-1, tgt).sum()
            if algo == "mc"
            else per_token.sum()
        )
        torch.testing.assert_close(s, want.float(), atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(
            lp, F.log_softmax(guided[0], dim=-1).gather(-1, tgt).sum().float(), atol=1e-4, rtol=1e-4
        )


def test_cache_from_reuses_its_scratch_memory_up_to_a_bound(monkeypatch):
    kv = [(torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4)) for _ in range(2)]
    scratch: list = []
    first = decode_cache.cache_from(kv, 2, rows=[0, 0, 1], scratch=scratch)
    held = scratch[0].data_ptr()
    assert torch.equal(first.layers[1].keys[2], kv[1][0][1]) and torch.equal(
        first.layers[0].values[1], kv[0][1][0]
    )
    decode_cache.cache_from(kv, 1, rows=[1], scratch=scratch)
    assert scratch[0].data_ptr() == held  # the same memory again
    monkeypatch.setattr(decode_cache, "SCRATCH_BYTES", 16)
    big = decode_cache.cache_from(kv, 2, rows=[1, 0], scratch=scratch)
    assert scratch[0].data_ptr() == held and torch.equal(big.layers[0].keys[0], kv[0][0][1])
