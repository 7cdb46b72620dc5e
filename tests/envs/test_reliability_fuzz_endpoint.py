"""The endpoint client against a local server that picks its faults at random (hypothesis): wrong
statuses, garbage, JSON nested past Python's recursion limit, replies without choices, cut,
dropped, trickled and oversized replies, one after another over the retries. Whatever it does,
``act`` returns one line or raises :class:`EndpointError` with one line, within the deadline.

Few examples by default (derandomized); ``LMRL_HEAVY=1`` tries many.
"""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st
from support.fake_endpoint import CUT, DROP, OK_BODY, TRICKLE_BODY, TRICKLE_HEADERS, FakeServer
from support.fuzz_text import ANY_CHAR, fuzz

from envs.core import Text
from envs.players.remote import ChatEndpointAgent, EndpointError

DEADLINE = 1.0
SLACK = 1.5
"""Seconds past the deadline a call may take on a loaded machine (closing the connection)."""
CAP = 64 * 1024


def _reply(content) -> dict:
    return {"choices": [{"message": {"content": content}}]}


bodies = st.one_of(
    st.just(OK_BODY),
    st.builds(_reply, st.text(ANY_CHAR, max_size=200)),
    st.builds(_reply, st.none() | st.integers() | st.lists(st.integers(), max_size=2)),
    st.sampled_from(
        [{}, [], {"choices": []}, {"choices": [{}]}, {"choices": None}, "text", 3, None]
    ),
    st.binary(max_size=300),
    st.sampled_from(
        [b"[" * 20_000, b'{"a":' * 10_000, b"\xff\xfe\x00", b"", b"null", b"x" * (CAP + 1)]
    ),
)
answers = st.one_of(
    st.tuples(
        st.sampled_from([200, 200, 200, 201, 204, 301, 400, 401, 404, 418, 429, 500, 502, 503]),
        bodies,
    ),
    st.sampled_from([CUT, DROP, TRICKLE_BODY, TRICKLE_HEADERS]),
)
HISTORY = [Text("You see a wall.\n", False), Text("move up\n", True), Text("A wall.\n", False)]


@fuzz(12, 200)
@given(script=st.lists(answers, min_size=1, max_size=4), default=answers, send_length=st.booleans())
def test_any_server_behaviour_is_a_reply_or_one_line_in_time(
    server: FakeServer, script, default, send_length
) -> None:
    server.script, server.default, server.send_length = list(script), default, send_length
    agent = ChatEndpointAgent(
        server.url,
        "tiny",
        api_key_env=None,
        deadline=DEADLINE,
        timeout=0.5,
        max_reply_bytes=CAP,
        retries=2,
        sleep=lambda s: None,
    )
    started = time.monotonic()
    try:
        reply = agent.act(HISTORY)
    except EndpointError as e:
        assert str(e) and "\n" not in str(e)
    else:
        assert isinstance(reply, str) and reply.endswith("\n") and reply.count("\n") == 1
    finally:
        agent.close()
    assert time.monotonic() - started < DEADLINE + SLACK


def test_json_nested_past_the_recursion_limit_is_a_malformed_reply(server: FakeServer) -> None:
    server.default = (200, b"[" * 20_000)
    agent = ChatEndpointAgent(server.url, "tiny", api_key_env=None, sleep=lambda s: None)
    try:
        agent.act(HISTORY)
    except EndpointError as e:
        assert "malformed reply" in str(e) and "\n" not in str(e)
    else:
        raise AssertionError("a reply of 20,000 '[' is not a chat reply")
    finally:
        agent.close()
