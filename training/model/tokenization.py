"""Tokenizers: a byte-level BPE built from the dataset's own text (``tiny``), or a model's own.

Segments are tokenised one by one and concatenated (docs/algorithms.md §0.2); with the GPT-2
pre-tokeniser, merges never cross a ``"\\n"``, so segment-wise ids equal whole-string ids when every
segment ends in a newline (test T1).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from transformers import AutoTokenizer, PreTrainedTokenizerBase, PreTrainedTokenizerFast

from training.errors import TrainingError

PAD = "<|pad|>"
EOS = "<|endoftext|>"


def build_tokenizer(
    texts: Iterable[str], vocab_size: int = 512, kind: str = "bpe"
) -> PreTrainedTokenizerFast:
    """Train a byte-level BPE (``kind="bpe"``) or the bare 256-byte alphabet (``"byte"``) locally."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    size = len(alphabet) + 2 if kind == "byte" else max(int(vocab_size), len(alphabet) + 2)
    trainer = trainers.BpeTrainer(
        vocab_size=size, special_tokens=[PAD, EOS], initial_alphabet=alphabet, show_progress=False
    )
    tok.train_from_iterator(list(texts) or [" "], trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, eos_token=EOS)


def load_tokenizer(path: str | Path) -> PreTrainedTokenizerBase:
    """A tokenizer from a local folder or hub id (never downloads: ``local_files_only``)."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # its warnings (e.g. an unknown model type) would precede our line
    try:
        tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except Exception as e:  # noqa: BLE001 - transformers raises many types
        raise TrainingError(f"cannot load a tokenizer from {path}: {type(e).__name__}") from None
    finally:
        hf_logging.set_verbosity(verbosity)
    if len(tok) < 2:  # a folder without tokenizer files gives an empty tokenizer, not an error
        raise TrainingError(
            f"no tokenizer in {path} (expected tokenizer.json or the vocabulary files)"
        )
    return tok


def ensure_pad(tok: PreTrainedTokenizerBase) -> bool:
    """Add LMRL's ``<|pad|>`` when the tokenizer has none; True if the vocabulary grew."""
    if tok.pad_token_id is not None:
        return False
    tok.add_special_tokens({"pad_token": PAD})
    return True


def encode(tok: PreTrainedTokenizerBase, text: str) -> list[int]:
    """Token ids of one segment, without special tokens."""
    return list(tok.encode(text, add_special_tokens=False))


def encode_many(tok: PreTrainedTokenizerBase, texts: Sequence[str]) -> list[list[int]]:
    """:func:`encode` of every text, in one call of the tokenizer: a fast tokenizer's own
    ``encode_batch_fast`` where it has one and no truncation or padding of its own (the same ids
    without the character offsets: a third less time on a batch's histories)."""
    if not texts:
        return []
    backend = getattr(tok, "backend_tokenizer", None)
    fast = getattr(backend, "encode_batch_fast", None)
    if fast is not None and backend.truncation is None and backend.padding is None:
        return [e.ids for e in fast(list(texts), add_special_tokens=False)]
    return [list(ids) for ids in tok(list(texts), add_special_tokens=False)["input_ids"]]


def never_sampled(tok: PreTrainedTokenizerBase) -> list[int]:
    """Special tokens a policy must not write: padding, and the tokenizer's own end-of-text when
    it is not the newline that ends an utterance."""
    nl = newline_id(tok)
    ids = {tok.pad_token_id, tok.eos_token_id} - {None, nl}
    return sorted(int(i) for i in ids)


def newline_id(tok: PreTrainedTokenizerBase) -> int | None:
    """The generation EOS: the first token of ``"\\n"`` (LMRL's convention)."""
    ids = encode(tok, "\n")
    return ids[0] if len(ids) == 1 else None
