"""An agent or partner backed by an OpenAI-compatible chat endpoint (vLLM, llama.cpp, Ollama, ...).

Standard library only (``urllib``). The text history becomes chat messages: observations are
``user`` turns and the agent's own lines ``assistant`` turns, after a system prompt chosen by the
role the agent plays (``seller``, ``buyer``, ``oracle``, ``asker``, ``agent``). A history that ends
with a cut-off line of the agent's own (Car Dealer's forced ``"...Output: Decision="``) is sent
as a request to complete that line. The reply is cut at its first newline and ends with one
``"\\n"``, like LMRL's policies.

Failures raise :class:`EndpointError` with one line meant for the user. Connection errors,
timeouts, HTTP 429 and 5xx are retried with exponential backoff; other HTTP errors and malformed
replies are not.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from envs.core import Text

SYSTEM_PROMPTS: Mapping[str, str] = {
    "agent": "You play a text game. Reply with exactly one line: your next action.",
    "seller": (
        "You are a car salesperson talking to a customer. Find out what they want, offer a car "
        "and agree on a price. Reply with exactly one line."
    ),
    "buyer": (
        "You are a customer at a car dealership. The first messages give your personality, the "
        "car you want and your budget; stay in character. Reply with exactly one line. When you "
        "decide, end the line with 'Output: Decision=Accept MSRP=$<list price> Buy Price=$<price>' "
        "or 'Output: Decision=Reject MSRP=$<list price>'."
    ),
    "oracle": (
        "You know the hidden answer given in the first message. Answer each question truthfully "
        "in one line without naming the answer."
    ),
    "asker": "Find the hidden answer by asking questions. Reply with exactly one line.",
}


class EndpointError(RuntimeError):
    """The model endpoint failed; ``str(err)`` is one line to show the user."""


def history_to_messages(history: Sequence[Text], system: str | None) -> list[dict[str, str]]:
    """Chat messages for ``history`` (consecutive segments of one side are joined)."""
    msgs: list[dict[str, str]] = [{"role": "system", "content": system}] if system else []
    items = list(history)
    partial = None
    if items and items[-1].is_action:
        partial = items.pop().text
    for t in items:
        role = "assistant" if t.is_action else "user"
        text = t.text.rstrip("\n")
        if msgs and msgs[-1]["role"] == role and role != "system":
            msgs[-1]["content"] += "\n" + text
        else:
            msgs.append({"role": role, "content": text})
    if partial is not None:
        ask = f"Complete this line of yours; reply with the rest of the line only:\n{partial}"
        if msgs and msgs[-1]["role"] == "user":
            msgs[-1]["content"] += "\n" + ask
        else:
            msgs.append({"role": "user", "content": ask})
    return msgs


class ChatEndpointAgent:
    """Any OpenAI-compatible ``/chat/completions`` endpoint as an :class:`envs.Agent`."""

    kind = "http"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        role: str = "agent",
        api_key_env: str | None = "OPENAI_API_KEY",
        system_prompt: str | None = None,
        timeout: float = 30.0,
        retries: int = 2,
        backoff: float = 0.5,
        temperature: float = 0.0,
        max_tokens: int = 128,
        name: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise EndpointError(f"not an http(s) URL: {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.role = role
        self.api_key_env = api_key_env
        self.system_prompt = system_prompt if system_prompt is not None else SYSTEM_PROMPTS.get(
            role, SYSTEM_PROMPTS["agent"]
        )
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.backoff = float(backoff)
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.name = name or f"{model}@{parts.netloc}"
        self._sleep = sleep
        self._seed: int | None = None

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def reset(self, task: Any = None, seed: int | None = None) -> None:
        """Remember the seed (sent to servers that honour it for sampling)."""
        self._seed = seed

    def act(self, history: Sequence[Text]) -> str:
        """The endpoint's next line for ``history`` (raises :class:`EndpointError`)."""
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": history_to_messages(history, self.system_prompt),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stop": ["\n"],
        }
        if self._seed is not None:
            payload["seed"] = self._seed
        reply = self._post(payload)
        try:
            content = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise EndpointError(f"{self.url} sent a malformed reply (no choices[0].message.content)") from None
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise EndpointError(f"{self.url} sent a malformed reply (content is not text)")
        return content.lstrip("\n").split("\n", 1)[0] + "\n"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _post(self, payload: Mapping[str, Any]) -> Any:
        body = json.dumps(payload).encode("utf-8")
        last = "no attempt"
        for attempt in range(self.retries + 1):
            if attempt:
                self._sleep(self.backoff * 2 ** (attempt - 1))
            req = urllib.request.Request(self.url, data=body, headers=self._headers(), method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
            except urllib.error.HTTPError as e:
                detail = _short(e.read())
                if e.code == 429 or e.code >= 500:
                    last = f"HTTP {e.code} {detail}".strip()
                    continue
                hint = f" (is ${self.api_key_env} set?)" if e.code in (401, 403) and self.api_key_env else ""
                raise EndpointError(f"{self.url} answered HTTP {e.code}{hint}: {detail}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as e:
                reason = getattr(e, "reason", e)
                last = str(reason) or type(e).__name__
                continue
            try:
                return json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                raise EndpointError(f"{self.url} sent a malformed reply (not JSON): {_short(raw)}") from None
        raise EndpointError(
            f"cannot reach the model endpoint {self.base_url} after {self.retries + 1} tries "
            f"({last}); is the server running?"
        )


def _short(raw: bytes | str, limit: int = 120) -> str:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
