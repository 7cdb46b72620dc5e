"""Nineteen broken ``hf:`` model folders through the command line (``lmrl generate maze-fo
--policy hf:PATH``, all in one fresh process, stderr read at its descriptor): each is one line on
stderr and a failed exit, never a traceback, nor transformers' logging."""

from __future__ import annotations

import json
import shutil
import string
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

pytestmark = pytest.mark.slow


def _save_tiny(path: Path, n_embd: int = 32, extra_vocab: int = 0) -> None:
    """A 2-layer GPT-2 with random weights and a character tokenizer (as tests/training does)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    chars = ["<unk>", "<eos>", *string.printable]
    # extra_vocab: tokens ahead of the characters, whose ids then run past the model's table
    vocab = {c: i for i, c in enumerate([f"<x{i}>" for i in range(extra_vocab)] + chars)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        eos_token="<eos>",
        pad_token="<eos>",
        clean_up_tokenization_spaces=False,
    ).save_pretrained(path)
    torch.manual_seed(0)
    eos = vocab["<eos>"]  # (GPT-2's default 50256 is past this vocabulary: transformers would warn)
    cfg = GPT2Config(
        vocab_size=len(chars),
        n_positions=256,
        n_embd=n_embd,
        n_layer=2,
        n_head=2,
        bos_token_id=eos,
        eos_token_id=eos,
    )
    GPT2LMHeadModel(cfg).save_pretrained(path)


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tiny-gpt2")
    _save_tiny(path)
    return path


def _edit_json(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def _truncate(path: Path) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])


def _swap_weights(folder: Path, tmp: Path, **kw) -> None:
    other = tmp / "other"
    _save_tiny(other, **kw)
    shutil.copy(other / "model.safetensors", folder / "model.safetensors")


DAMAGES = {
    "missing folder": lambda f, t: shutil.rmtree(f),
    "empty folder": lambda f, t: [p.unlink() for p in f.iterdir()],
    "a file, not a folder": lambda f, t: (shutil.rmtree(f), f.write_text("model")),
    "config not json": lambda f, t: (f / "config.json").write_text("{ not json"),
    "config empty": lambda f, t: (f / "config.json").write_text(""),
    "config missing": lambda f, t: (f / "config.json").unlink(),
    "config is a folder": lambda f, t: ((f / "config.json").unlink(), (f / "config.json").mkdir()),
    "unknown model_type": lambda f, t: _edit_json(f / "config.json", model_type="no-such-model"),
    "config wrong types": lambda f, t: _edit_json(f / "config.json", n_layer="two", n_embd=None),
    "weights garbage": lambda f, t: (f / "model.safetensors").write_text("{ not json"),
    "weights empty": lambda f, t: (f / "model.safetensors").write_bytes(b""),
    "weights missing": lambda f, t: (f / "model.safetensors").unlink(),
    "weights cut in half": lambda f, t: _truncate(f / "model.safetensors"),
    "weights of another shape": lambda f, t: _swap_weights(f, t, n_embd=64),
    "pickled weights only": lambda f, t: (
        (f / "model.safetensors").unlink(),
        (f / "pytorch_model.bin").write_bytes(b"\x80\x04pickle"),
    ),
    "tokenizer garbage": lambda f, t: (f / "tokenizer.json").write_text("{ not json"),
    "tokenizer missing": lambda f, t: [
        (f / n).unlink()
        for n in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
        if (f / n).exists()
    ],
    "tokenizer config garbage": lambda f, t: (f / "tokenizer_config.json").write_text("[1, 2"),
    "tokenizer larger than the model": lambda f, t: _swap_tokenizer(f, t),
}


def _swap_tokenizer(folder: Path, tmp: Path) -> None:
    """A tokenizer whose ids run past the model's embedding table."""
    other = tmp / "big-vocab"
    _save_tiny(other, extra_vocab=500)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (other / name).exists():
            shutil.copy(other / name, folder / name)


def test_there_are_nineteen() -> None:
    assert len(DAMAGES) == 19


WORKER = textwrap.dedent(
    """
    import json, os, sys, tempfile, traceback
    from lmrl_tui.cli import main

    folders, out = json.loads(sys.argv[1]), sys.argv[2]
    results = {}
    for name, folder in folders.items():
        # stderr at the descriptor: transformers' log handler writes to the stream it found at import
        with tempfile.TemporaryFile("w+") as err:
            saved = os.dup(2)
            os.dup2(err.fileno(), 2)
            try:
                rc = main(["--db", os.path.join(folder + "-db", "m.db"), "generate", "maze-fo",
                           "--episodes", "1", "--quiet", "--policy", "hf:" + folder])
            except BaseException:
                rc = 1
                sys.stderr.write(traceback.format_exc())  # what Python would print
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            err.seek(0)
            results[name] = {"rc": rc, "err": err.read()}
    with open(out, "w") as f:
        json.dump(results, f)
    """
)


@pytest.fixture(scope="module")
def outcomes(good: Path, tmp_path_factory) -> dict[str, dict]:
    """Every folder (the good one and the 19 broken) through the CLI in one fresh process."""
    root = tmp_path_factory.mktemp("broken")
    folders = {}
    for i, (name, damage) in enumerate({"good": lambda f, t: None, **DAMAGES}.items()):
        t = root / f"case{i}"
        t.mkdir()
        (t / "model-db").mkdir()
        shutil.copytree(good, t / "model")
        damage(t / "model", t)
        folders[name] = str(t / "model")
    out = root / "outcomes.json"
    proc = subprocess.run(
        [sys.executable, "-c", WORKER, json.dumps(folders), str(out)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_the_good_folder_plays(outcomes) -> None:
    """The damage is what fails: the undamaged folder plays an episode, saying nothing."""
    assert outcomes["good"] == {"rc": 0, "err": ""}


KNOWN_BUGS: dict[str, str] = {}  # every broken folder is one line now


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(d, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[d]))
        if d in KNOWN_BUGS
        else d
        for d in DAMAGES
    ],
)
def test_a_broken_model_folder_is_one_line(damage: str, outcomes) -> None:
    rc, err = outcomes[damage]["rc"], outcomes[damage]["err"]
    assert rc != 0 and err.count("\n") == 1 and err.startswith("lmrl: error: "), err
    assert "Traceback" not in err
