"""``lmrl serve`` in a real browser (Debian's chromium through playwright): play a maze to the
goal, two browsers on two tasks at once, and the access token on the page and the websocket. Each
test starts the server on a free loopback port with its own store and kills it at the end."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from support.processes import group_members
from support.serve_browser import (
    BrowserTerminal,
    browser_missing,
    launch_chromium,
    reach_home,
    served,
    start_episode,
    wait_for_episode,
)

import envs

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]

ARROW = {
    "move up\n": "ArrowUp",
    "move down\n": "ArrowDown",
    "move left\n": "ArrowLeft",
    "move right\n": "ArrowRight",
}
TOKEN = "test-token-0123456789abcdef"


def scripted_actions(task_id: str, policy: str, seed: int) -> list[str]:
    ep = envs.run_episode(envs.make(task_id), envs.make_policy(task_id, policy), seed)
    return [t.action for t in ep.transitions]


def test_play_a_maze_in_the_browser_and_find_every_step_in_the_store(tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    db = tmp_path / "served.db"
    seed = 7
    actions = scripted_actions("maze-fo", "optimal", seed)
    with served(db) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            term = BrowserTerminal(browser.new_page(viewport={"width": 1280, "height": 800}))
            name = reach_home(term, server.url)
            start_episode(term, db, "maze-fo", "Maze (fully observed)", seed)
            term.press(*[ARROW[a] for a in actions], pause_ms=150)
            ep, steps = wait_for_episode(db, "maze-fo", len(actions))
            # Ctrl+C / SIGTERM with a browser still connected: the server tells its app to quit
            # and goes; nothing of theirs is left running.
            os.kill(server.proc.pid, signal.SIGTERM)
            assert server.proc.wait(timeout=20) == 0
            deadline = time.monotonic() + 20
            while group_members(server.proc.pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert group_members(server.proc.pid) == []
        finally:
            browser.close()
    assert ep["seed"] == seed and ep["source"] == "human" and ep["agent_kind"] == "human"
    assert ep["status"] == "finished" and ep["success"] == 1
    assert [s["action"] for s in steps] == actions
    assert [s["typed"] for s in steps] == [None] * len(
        actions
    )  # keys, recorded as the keys pressed
    assert [(s["info"]["via"], s["info"]["key"]) for s in steps] == [
        ("key", ARROW[a].removeprefix("Arrow").lower()) for a in actions
    ]
    task = envs.make("maze-fo")
    task.reset(seed)
    assert ep["return"] == sum(s["reward"] for s in steps) == task.state()["optimal_return"]
    if name is not None:
        assert ep["player"] == name


def test_two_browsers_on_two_tasks_at_once(tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    db = tmp_path / "served.db"
    maze = scripted_actions("maze-fo", "optimal", 7)
    words = [a.replace(" ", "").strip() for a in scripted_actions("wordle", "strong", 3)]
    with served(db) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            # two contexts: two people, nothing shared (cookies, storage)
            a = BrowserTerminal(
                browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            )
            b = BrowserTerminal(
                browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            )
            reach_home(a, server.url)
            reach_home(b, server.url)
            start_episode(a, db, "maze-fo", "Maze (fully observed)", 7)
            start_episode(b, db, "wordle", "Wordle", 3)
            moves = iter(ARROW[m] for m in maze)
            for n, word in enumerate(words, 1):  # interleaved: a maze move, a Wordle guess, ...
                if (key := next(moves, None)) is not None:
                    a.press(key, pause_ms=150)
                b.type(word)
                b.press("Enter")
                # like a person, the next guess after this one's tiles have turned
                wait_for_episode(db, "wordle", n, finished=n == len(words))
                b.page.wait_for_timeout(500)
            a.press(*moves, pause_ms=150)
            maze_ep, maze_steps = wait_for_episode(db, "maze-fo", len(maze))
            wordle_ep, wordle_steps = wait_for_episode(db, "wordle", len(words))
        finally:
            browser.close()
    assert maze_ep["id"] != wordle_ep["id"]
    assert [s["action"] for s in maze_steps] == maze
    assert [s["typed"] for s in wordle_steps] == words
    assert maze_ep["success"] == 1 and wordle_ep["success"] == 1
    assert wordle_ep["seed"] == 3 and wordle_ep["status"] == "finished"


async def _ws_status(url: str, headers: dict[str, str] | None = None) -> int:
    """The status the websocket handshake gets (101 when it opens; it then closes at once)."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        try:
            async with session.ws_connect(
                url, headers=headers or {}, timeout=aiohttp.ClientWSTimeout(ws_close=5)
            ) as ws:
                await ws.close()
                return 101
        except aiohttp.WSServerHandshakeError as e:
            return e.status


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
    """Status, headers and body of one GET (redirects not followed)."""
    import http.client
    from urllib.parse import urlsplit

    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    try:
        conn.request("GET", u.path + (f"?{u.query}" if u.query else ""), headers=headers or {})
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read().decode()
    finally:
        conn.close()


def test_the_token_guards_the_page_and_the_websocket(tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    db = tmp_path / "served.db"
    with served(db, token=TOKEN) as server:
        base, ws = server.base, server.base.replace("http:", "ws:") + "ws"
        cookie = {"Cookie": f"lmrl_serve_token_{server.port}={TOKEN}"}
        assert _get(base)[0] == 401
        assert _get(base + "static/js/textual.js")[0] == 401
        assert _get(base + "?token=" + TOKEN[:-1] + "X")[0] == 403
        assert _get(base, {"Cookie": f"lmrl_serve_token_{server.port}=nope"})[0] == 403
        status, headers, _ = _get(
            base + "?token=" + TOKEN
        )  # the first visit: a cookie, and away from the token
        assert status == 303 and headers["Location"] == "/"
        assert (
            f"lmrl_serve_token_{server.port}={TOKEN}" in headers["Set-Cookie"]
            and "HttpOnly" in headers["Set-Cookie"]
        )
        status, _, page = _get(base, cookie)
        assert status == 200 and f"ws://127.0.0.1:{server.port}/ws" in page
        assert asyncio.run(_ws_status(ws)) == 401
        assert asyncio.run(_ws_status(ws + "?token=wrong-token-0123456789")) == 403
        assert asyncio.run(_ws_status(ws + "?token=" + TOKEN)) == 101
        assert asyncio.run(_ws_status(ws, cookie)) == 101
        assert asyncio.run(_ws_status(ws, {**cookie, "Origin": "http://evil.example"})) == 403
        with sync_playwright() as p:
            browser = launch_chromium(p)
            try:
                page = browser.new_page()
                assert page.goto(base, timeout=20_000).status == 401
                term = BrowserTerminal(browser.new_page(viewport={"width": 1280, "height": 800}))
                reach_home(term, server.url)  # the app itself, over the websocket, with the cookie
                assert "token" not in term.page.url  # the redirect took it out of the address
            finally:
                browser.close()


def test_a_second_browser_is_not_offered_the_episode_the_first_is_playing(tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    db = tmp_path / "served.db"
    with served(db) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            a = BrowserTerminal(
                browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            )
            reach_home(a, server.url)
            start_episode(a, db, "maze-fo", "Maze (fully observed)", 5)
            a.press("ArrowDown")
            wait_for_episode(db, "maze-fo", 1, finished=False)
            b = BrowserTerminal(
                browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            )
            b.open(server.url)  # no keys typed: on that dialog "a" marks the episode abandoned
            b.wait_for("Pick a task", timeout=45)
            b.page.wait_for_timeout(3000)  # the search for unfinished episodes runs in a worker
            assert not b.shows("unfinished episode"), b.screen.text()
            assert wait_for_episode(db, "maze-fo", 1, finished=False)[0]["status"] == "in_progress"
        finally:
            browser.close()


def test_a_campaign_s_configured_episode_opens_in_every_browser_and_records_as_typed(
    tmp_path,
) -> None:
    """``lmrl serve --task … --as oracle``: the person names themselves, lands in the episode, and
    types ``sometimes`` into the focused reply line; the store keeps it as typed."""
    from playwright.sync_api import sync_playwright

    db = tmp_path / "served.db"
    flags = [
        "--task",
        "twenty-questions",
        "--as",
        "oracle",
        "--vs",
        "strong",
        "--seed",
        "3",
        "--option",
        "secret=guitar",
    ]
    with served(db, extra=flags) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            term = BrowserTerminal(browser.new_page(viewport={"width": 1280, "height": 800}))
            reach_home(term, server.url)
            term.wait_for("waiting for your answer", timeout=60)
            term.type("sometimes")
            term.press("Enter")
            ep, steps = wait_for_episode(db, "twenty-questions", 1, finished=False, seed=3)
        finally:
            browser.close()
    assert (
        ep["partner_kind"] == "human"
        and ep["agent_name"] == "strong"
        and ep["options"]["secret"] == "guitar"
    )
    assert steps[0]["info"]["partner"] == {
        **steps[0]["info"]["partner"],
        "via": "typed",
        "typed": "sometimes",
    }
