"""An agent or partner backed by an OpenAI-compatible chat endpoint (vLLM, llama.cpp, Ollama, ...).

The text history becomes chat messages: observations are ``user`` turns and the agent's own
lines ``assistant`` turns, after a system prompt chosen by the role the agent plays (``seller``,
``buyer``, ``oracle``, ``asker``, ``agent``). A history that ends with a cut-off line of the agent's
own (Car Dealer's forced ``"...Output: Decision="``) is sent as a request to complete that line.
The reply is cut at its first newline and ends with one ``"\\n"``, like LMRL's policies.

HTTP is httpx (:mod:`envs.players.remote_http`, imported on the first call). Failures raise
:class:`EndpointError` with one line meant for the user. Connection errors, timeouts, HTTP 429
and 5xx and replies broken off mid-way are retried with exponential backoff; other HTTP errors
and malformed replies are not. Each call, retries included, ends by a deadline
(``$LMRL_ENDPOINT_DEADLINE`` seconds, 60 by default), even against a server that trickles its
reply, and a reply body over a cap (``$LMRL_ENDPOINT_MAX_BYTES``, 1 MiB by default) is refused.
``https`` endpoints are checked against the default CAs plus ``$LMRL_ENDPOINT_CA`` (a CA file or
folder, for a self-signed server); ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``NO_PROXY`` are honoured,
the deadline included (see :mod:`envs.players.remote_http`).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from envs.core import Text

if TYPE_CHECKING:
    from envs.players.remote_http import DeadlineClient

DEADLINE_ENV = "LMRL_ENDPOINT_DEADLINE"
MAX_BYTES_ENV = "LMRL_ENDPOINT_MAX_BYTES"
DEFAULT_DEADLINE = 60.0
"""Seconds one call may take, all its tries included."""
DEFAULT_MAX_BYTES = 1 << 20
"""The largest reply body accepted (1 MiB; a chat reply of one line is a few hundred bytes)."""

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
    "guesser": "Find the hidden answer by asking questions. Reply with exactly one line.",
}
"""The generic rules of each role, for a task that gives a role no instructions of its own."""


def role_prompt(role: str, task: Any = None) -> str:
    """What a chat model playing ``role`` in ``task`` is told: the task's own instructions for the
    role (``TaskSpec.instructions``), else the role's generic rules, with the task's summary for
    the acting side (``roles[0]``)."""
    spec = getattr(task, "spec", None)
    own = getattr(spec, "instructions", None) or {}
    if role in own:
        return own[role]
    generic = SYSTEM_PROMPTS.get(role, SYSTEM_PROMPTS["agent"])
    if spec is not None and role == spec.roles[0] and spec.summary:
        return f"{generic} The game: {spec.summary}"
    return generic


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


def chat_view(history: Sequence[Text], system: str | None) -> str:
    """What a chat model reads, as text for a person: each message on its own lines after its
    role in brackets (the play screen's "What the model sees")."""
    return (
        "\n".join(f"[{m['role']}] {m['content']}" for m in history_to_messages(history, system))
        + "\n"
    )


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
        deadline: float | None = None,
        max_reply_bytes: int | None = None,
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
        self._own_prompt = system_prompt is not None
        self.system_prompt = system_prompt if system_prompt is not None else role_prompt(role)
        """The system message; without one given, the task's instructions for ``role``, taken at
        each :meth:`reset` (:func:`role_prompt`)."""
        self.host = parts.netloc
        self.timeout = float(timeout)
        """Seconds for one network operation (a connect, a read) within a try."""
        self.deadline = _setting("deadline", deadline, DEADLINE_ENV, DEFAULT_DEADLINE, float)
        """Seconds for a whole call, retries and backoff included."""
        self.max_reply_bytes = int(
            _setting("max_reply_bytes", max_reply_bytes, MAX_BYTES_ENV, DEFAULT_MAX_BYTES, int)
        )
        self.retries = max(0, int(retries))
        self.backoff = float(backoff)
        self.temperature = float(temperature)
        self.max_tokens = int(max_tokens)
        self.name = name or f"{model}@{parts.netloc}"
        self._sleep = sleep
        self._seed: int | None = None
        self._client: DeadlineClient | None = None

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def close(self) -> None:
        """Close the kept-alive connections (the agent can still be used: it reconnects)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def reset(self, task: Any = None, seed: int | None = None) -> None:
        """Remember the seed (sent to servers that honour it for sampling) and take the task's
        instructions for this agent's role as the system message."""
        self._seed = seed
        if task is not None and not self._own_prompt:
            self.system_prompt = role_prompt(self.role, task)

    def model_view(self, history: Sequence[Text]) -> str:
        """The messages sent for ``history``, as text (:func:`chat_view`)."""
        return chat_view(history, self.system_prompt)

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
            raise EndpointError(
                f"{self.url} sent a malformed reply (no choices[0].message.content)"
            ) from None
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise EndpointError(f"{self.url} sent a malformed reply (content is not text)")
        return content.lstrip("\n").split("\n", 1)[0] + "\n"

    def _headers(self) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Accept-Encoding": "identity",
        }
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _post(self, payload: Mapping[str, Any]) -> Any:
        from envs.players import remote_http as h

        if self._client is None:
            try:
                self._client = h.DeadlineClient(self.timeout)
            except h.BadSetting as e:
                raise EndpointError(str(e)) from None
        body = json.dumps(payload).encode("utf-8")
        deadline = time.monotonic() + self.deadline
        last, reached = "", False  # the last failure; whether the server answered it
        for attempt in range(self.retries + 1):
            if attempt:
                wait = self.backoff * 2 ** (attempt - 1)
                if time.monotonic() + wait >= deadline:
                    raise self._late(last)
                self._sleep(wait)
            try:
                status, raw = self._client.post(
                    self.url,
                    body,
                    self._headers(),
                    deadline=deadline,
                    max_bytes=self.max_reply_bytes,
                )
            except h.Late:
                raise self._late(last) from None
            except h.TooLarge:
                raise EndpointError(
                    f"the reply from {self.host} is larger than {_size(self.max_reply_bytes)}"
                ) from None
            except h.Undecodable as e:
                raise EndpointError(
                    f"{self.url} sent a malformed reply ({_short(str(e))})"
                ) from None
            except h.Untrusted as e:
                raise EndpointError(
                    f"the TLS certificate of {self.host} is not trusted ({_short(str(e))}); "
                    f"name its CA file in ${h.CA_ENV} or SSL_CERT_FILE"
                ) from None
            except h.BadSetting as e:
                raise EndpointError(str(e)) from None
            except h.Unreachable as e:
                last, reached = _short(str(e)), e.connected
                continue
            if status == 429 or status >= 500:
                last, reached = f"HTTP {status} {_short(raw)}".strip(), True
                continue
            if not 200 <= status < 300:
                hint = (
                    f" (is ${self.api_key_env} set?)"
                    if status in (401, 403) and self.api_key_env
                    else ""
                )
                raise EndpointError(f"{self.url} answered HTTP {status}{hint}: {_short(raw)}")
            try:
                return json.loads(raw)
            except (ValueError, RecursionError):  # RecursionError: JSON nested thousands deep
                raise EndpointError(
                    f"{self.url} sent a malformed reply (not JSON): {_short(raw)}"
                ) from None
        tries = self.retries + 1
        if reached:
            raise EndpointError(
                f"the model endpoint {self.base_url} failed {tries} tries in a row (last: {last})"
            )
        raise EndpointError(
            f"cannot reach the model endpoint {self.base_url} after {tries} tries ({last}); is the server running?"
        )

    def _late(self, last: str) -> EndpointError:
        why = f" (last try: {last})" if last else ""
        return EndpointError(
            f"the endpoint at {self.host} did not answer within {self.deadline:g} s{why}"
        )


def _setting(name: str, value: float | None, env: str, default: float, kind: type) -> float:
    """The argument ``name``'s ``value``, else ``$env``, else ``default``: a positive number."""
    source = "" if value is not None else os.environ.get(env, "").strip()
    if value is None and not source:
        return default
    try:
        number = kind(value if value is not None else source)
    except (TypeError, ValueError):
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        where = f"${env}" if value is None else name
        unit = "seconds" if kind is float else "bytes"
        raise EndpointError(f"{where} must be a positive number of {unit}, not {source or value!r}")
    return number


def _size(n: int) -> str:
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k and n % k == 0:
            return f"{n // k} {unit}"
    return f"{n} bytes"


def _short(raw: bytes | str, limit: int = 120) -> str:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
