"""The OpenAI-compatible endpoint agent against a fake server on 127.0.0.1."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from support.fake_endpoint import CUT, DROP, TRICKLE_BODY, TRICKLE_HEADERS, FakeServer

from envs.car_dealer.task import CarDealerTask
from envs.core import Text, run_episode
from envs.players.remote import ChatEndpointAgent, EndpointError, history_to_messages


def agent(url: str, **kw: Any) -> ChatEndpointAgent:
    kw.setdefault("sleep", lambda s: None)
    return ChatEndpointAgent(url, "tiny", **kw)


def test_reply_is_first_line_with_newline(server: FakeServer) -> None:
    a = agent(server.url, role="seller")
    assert a.act((Text("Start\n", False),)) == "hello there\n"
    req = server.requests[0]
    assert req["model"] == "tiny"
    assert req["stop"] == ["\n"]
    assert req["messages"][0]["role"] == "system"
    assert "salesperson" in req["messages"][0]["content"]
    assert req["messages"][1] == {"role": "user", "content": "Start"}


def test_history_maps_to_user_and_assistant_turns() -> None:
    hist = (
        Text("Start\n", False),
        Text("Hi\n", True),
        Text("Hello.\n", False),
        Text("Deal?\n", True),
        Text("Yes.\n", False),
    )
    msgs = history_to_messages(hist, "sys")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[-1]["content"] == "Yes."


def test_cut_off_own_line_becomes_a_completion_request() -> None:
    hist = (Text("Start\n", False), Text("persona\n", False), Text("Hm.Output: Decision=", True))
    msgs = history_to_messages(hist, None)
    assert msgs[-1]["role"] == "user"
    assert msgs[-1]["content"].endswith("Hm.Output: Decision=")
    assert "Complete this line" in msgs[-1]["content"]


def test_api_key_comes_from_the_named_variable(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_TEST_KEY", "sekrit")
    agent(server.url, api_key_env="MY_TEST_KEY").act((Text("x\n", False),))
    assert server.headers[0]["Authorization"] == "Bearer sekrit"
    monkeypatch.delenv("MY_TEST_KEY")
    agent(server.url, api_key_env="MY_TEST_KEY").act((Text("x\n", False),))
    assert "Authorization" not in server.headers[1]


def test_seed_is_sent_after_reset(server: FakeServer) -> None:
    a = agent(server.url)
    a.reset(None, 42)
    a.act((Text("x\n", False),))
    assert server.requests[0]["seed"] == 42


def test_server_errors_are_retried_with_backoff(server: FakeServer) -> None:
    waits: list[float] = []
    server.script = [(500, {"error": "boom"}), (429, {"error": "slow down"})]
    a = ChatEndpointAgent(server.url, "tiny", retries=2, backoff=0.25, sleep=waits.append)
    assert a.act((Text("x\n", False),)) == "hello there\n"
    assert waits == [0.25, 0.5]
    assert len(server.requests) == 3


def test_retries_give_up_with_one_line(server: FakeServer) -> None:
    server.script = [(503, {"error": "down"})] * 3
    with pytest.raises(EndpointError) as e:
        agent(server.url, retries=2).act((Text("x\n", False),))
    assert "\n" not in str(e.value)
    assert "HTTP 503" in str(e.value)


def test_client_errors_are_not_retried(server: FakeServer) -> None:
    server.script = [(401, {"error": "bad key"})]
    with pytest.raises(EndpointError, match="HTTP 401.*OPENAI_API_KEY"):
        agent(server.url).act((Text("x\n", False),))
    assert len(server.requests) == 1


def test_wrong_path_is_a_clear_error(server: FakeServer) -> None:
    with pytest.raises(EndpointError, match="HTTP 404"):
        agent(server.url.removesuffix("/v1")).act((Text("x\n", False),))


@pytest.mark.parametrize(
    "body",
    [
        b"not json at all",
        {"choices": []},
        {"nothing": 1},
        {"choices": [{"message": {"content": 5}}]},
    ],
)
def test_malformed_reply_is_an_endpoint_error(server: FakeServer, body: Any) -> None:
    server.default = (200, body)
    with pytest.raises(EndpointError, match="malformed"):
        agent(server.url).act((Text("x\n", False),))
    assert len(server.requests) == 1


def test_null_content_is_an_empty_line(server: FakeServer) -> None:
    server.default = (200, {"choices": [{"message": {"content": None}}]})
    assert agent(server.url).act((Text("x\n", False),)) == "\n"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_down_is_one_clear_line() -> None:
    a = agent(f"http://127.0.0.1:{_closed_port()}/v1", retries=1, timeout=2)
    with pytest.raises(EndpointError) as e:
        a.act((Text("x\n", False),))
    msg = str(e.value)
    assert "cannot reach the model endpoint" in msg and "2 tries" in msg and "\n" not in msg


@pytest.mark.parametrize("fault", [CUT, DROP])
def test_a_reply_cut_mid_way_is_retried(server: FakeServer, fault: str) -> None:
    waits: list[float] = []
    server.script = [fault, fault]
    a = ChatEndpointAgent(server.url, "tiny", retries=2, backoff=0.25, sleep=waits.append)
    assert a.act((Text("x\n", False),)) == "hello there\n"
    assert waits == [0.25, 0.5] and len(server.requests) == 3


def test_a_reply_cut_every_time_gives_up_with_one_line(server: FakeServer) -> None:
    server.default = CUT
    with pytest.raises(EndpointError) as e:
        agent(server.url, retries=1).act((Text("x\n", False),))
    msg = str(e.value)
    assert "\n" not in msg and "2 tries" in msg and len(server.requests) == 2


def _host(server: FakeServer) -> str:
    return server.url.split("//")[1].split("/")[0]


@pytest.mark.parametrize("fault", [TRICKLE_BODY, TRICKLE_HEADERS])
def test_a_trickling_server_meets_the_deadline(server: FakeServer, fault: str) -> None:
    """One byte every 50 ms never trips a 5 s read timeout; the 1 s deadline ends the call."""
    server.default = fault
    a = agent(server.url, timeout=5, deadline=1.0, retries=3)
    started = time.monotonic()
    with pytest.raises(EndpointError) as e:
        a.act((Text("x\n", False),))
    took = time.monotonic() - started
    assert str(e.value) == f"the endpoint at {_host(server)} did not answer within 1 s"
    assert 0.9 <= took < 2.5 and len(server.requests) == 1


def test_a_silent_server_times_out_and_is_retried(server: FakeServer) -> None:
    server.default, server.trickle_every = TRICKLE_BODY, 2.0  # headers, then nothing for 2 s
    with pytest.raises(EndpointError) as e:
        agent(server.url, timeout=0.2, deadline=5, retries=1).act((Text("x\n", False),))
    assert (
        str(e.value) == f"the model endpoint {server.url} failed 2 tries in a row (last: timed out)"
    )
    assert len(server.requests) == 2


def test_the_deadline_includes_the_retries(server: FakeServer) -> None:
    server.default = (503, {"error": "down"})
    a = ChatEndpointAgent(server.url, "tiny", retries=20, backoff=0.2, deadline=0.5)
    started = time.monotonic()
    with pytest.raises(EndpointError) as e:
        a.act((Text("x\n", False),))
    assert time.monotonic() - started < 1.0
    assert str(e.value).startswith(f"the endpoint at {_host(server)} did not answer within 0.5 s")
    assert "HTTP 503" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("send_length", [True, False])
def test_an_oversized_reply_is_refused(server: FakeServer, send_length: bool) -> None:
    server.send_length = send_length
    server.default = (200, {"choices": [{"message": {"content": "x" * 5000}}]})
    with pytest.raises(EndpointError) as e:
        agent(server.url, max_reply_bytes=1024).act((Text("x\n", False),))
    assert str(e.value) == f"the reply from {_host(server)} is larger than 1 KiB"
    assert len(server.requests) == 1
    server.default = (200, {"choices": [{"message": {"content": "x" * 500}}]})
    assert agent(server.url, max_reply_bytes=1024).act((Text("x\n", False),)) == "x" * 500 + "\n"


def test_deadline_and_cap_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    a = agent("http://127.0.0.1:9/v1")
    assert (a.deadline, a.max_reply_bytes) == (60.0, 1 << 20)
    monkeypatch.setenv("LMRL_ENDPOINT_DEADLINE", "2.5")
    monkeypatch.setenv("LMRL_ENDPOINT_MAX_BYTES", "4096")
    a = agent("http://127.0.0.1:9/v1")
    assert (a.deadline, a.max_reply_bytes) == (2.5, 4096)
    assert agent("http://127.0.0.1:9/v1", deadline=7).deadline == 7
    monkeypatch.setenv("LMRL_ENDPOINT_DEADLINE", "soon")
    with pytest.raises(EndpointError, match="LMRL_ENDPOINT_DEADLINE.*'soon'"):
        agent("http://127.0.0.1:9/v1")


def test_bad_url_is_rejected() -> None:
    with pytest.raises(EndpointError, match="not an http"):
        ChatEndpointAgent("localhost:8000", "m")


def test_endpoint_can_be_the_car_buyer(server: FakeServer) -> None:
    server.default = (
        200,
        {
            "choices": [
                {
                    "message": {
                        "content": "Fine. Output: Decision=Accept MSRP=$32,000 Buy Price=$30,000"
                    }
                }
            ]
        },
    )
    buyer = agent(server.url, role="buyer")
    task = CarDealerTask(partner=buyer)

    class Seller:
        kind, name = "scripted", "one-liner"

        def reset(self, task: Any, seed: int | None = None) -> None:
            pass

        def act(self, history: Any) -> str:
            return "A RAV4 for $30,000?\n"

    ep = run_episode(task, Seller(), seed=1)
    assert ep.transitions[-1].observation == "Fine. \n"
    assert ep.transitions[-1].info["decision"]["buy_price"] == 30000
    msgs = server.requests[0]["messages"]
    assert "Personality:" in msgs[1]["content"]
    assert "customer" in msgs[0]["content"]


def test_the_system_message_is_the_tasks_instructions_for_the_role(server: FakeServer) -> None:
    """An endpoint is told the rules of the game it plays (``TaskSpec.instructions``) from its
    first reset on: a guesser in Twenty Questions learns the game and how to name the object; a
    role the task gives no instructions gets its generic rules, the acting side with the task's
    summary; a system prompt given by the caller is kept."""
    import envs
    from envs.players.remote import SYSTEM_PROMPTS, role_prompt

    tq = envs.make("twenty-questions")
    guesser = agent(server.url, role="guesser")
    assert guesser.system_prompt == SYSTEM_PROMPTS["guesser"]
    guesser.reset(tq, 0)
    guesser.act((Text("Questions:\n", False),))
    system = server.requests[-1]["messages"][0]["content"]
    assert (
        system == tq.spec.instructions["guesser"]
        and "Twenty Questions" in system
        and "Is it a dog?" in system
    )
    assert (
        guesser.model_view(tq.history()) == f"[system] {system}\n[user] Questions:\n"
    )  # the play screen's view
    wordle = envs.make("wordle")
    assert (
        role_prompt("agent", wordle) == f"{SYSTEM_PROMPTS['agent']} The game: {wordle.spec.summary}"
    )
    buyer = agent(server.url, role="buyer")
    buyer.reset(envs.make("car-dealer"), 0)
    assert (
        buyer.system_prompt == SYSTEM_PROMPTS["buyer"]
    )  # the car dealer gives its buyer no rules of its own
    own = agent(server.url, role="guesser", system_prompt="Be brief.")
    own.reset(tq, 0)
    assert own.system_prompt == "Be brief."
