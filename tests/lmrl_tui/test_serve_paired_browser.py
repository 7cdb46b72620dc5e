"""Two people in two browsers on one ``lmrl serve --task TASK --vs paired``: they are paired
through the store, each plays their own side with typed turns, and every stored step says who
typed it and how; a browser that goes away mid-episode ends it as abandoned for both, with every
step played kept. Real chromium through playwright on loopback (``support.serve_browser``)."""

from __future__ import annotations

import time

import pytest
from support.serve_browser import BrowserTerminal, browser_missing, launch_chromium, served

from data.store import Store

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(browser_missing() is not None, reason=str(browser_missing())),
]


def _arrive(browser, url: str, name: str) -> BrowserTerminal:
    """A person opens the page and gives their name (the app then asks the lobby)."""
    term = BrowserTerminal(browser.new_context(viewport={"width": 1280, "height": 800}).new_page())
    term.open(url)
    term.wait_for("Who is playing", "name", timeout=45)
    term.page.wait_for_timeout(500)
    term.type(name)
    term.press("Enter")
    return term


def _say(term: BrowserTerminal, text: str) -> None:
    term.type(text)
    term.press("Enter")


def _steps(db, n: int, status: str | None = None, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while True:
        store = Store(db)
        try:
            eps = store.recent_episodes(5)
            if eps and eps[0]["n_steps"] >= n and (status is None or eps[0]["status"] == status):
                return eps[0], store.steps(eps[0]["id"])
        finally:
            store.close()
        if time.monotonic() > deadline:
            raise TimeoutError(f"never {n} steps ({status}): {eps[:1]}")
        time.sleep(0.2)


def test_two_browsers_play_twenty_questions_together(tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    db = tmp_path / "served.db"
    flags = ["--task", "twenty-questions", "--vs", "paired", "--seed", "7",
             "--option", "secret=guitar"]  # fmt: skip
    with served(db, extra=flags) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            ann = _arrive(browser, server.url, "Quokkie")
            ann.wait_for("Waiting for", timeout=45)
            bo = _arrive(browser, server.url, "Wombat")
            ann.wait_for("with Wombat", timeout=45)  # ann asked first: the guesser
            bo.wait_for("with Quokkie", timeout=45)
            turns = [("Is it alive?", "No."), ("is it made of wood", "sometimes"),
                     ("Is it a guitar?", "Yes.")]  # fmt: skip
            for n, (question, answer) in enumerate(turns, 1):
                _say(ann, question)
                bo.wait_for("waiting for your answer", timeout=30)
                _say(bo, answer)
                _steps(db, n)
            ann.wait_for("Episode over", timeout=30)
            bo.wait_for("Episode over", timeout=30)
            ep, steps = _steps(db, 3, "finished")
        finally:
            browser.close()
    assert (ep["player"], ep["partner_kind"], ep["partner_name"], ep["success"]) == (
        "Quokkie", "human", "Wombat", 1)  # fmt: skip
    assert [(s["typed"], s["info"]["via"], s["info"]["by"]) for s in steps] == [
        (q, "typed", "Quokkie") for q, _ in turns
    ]
    assert [
        (s["info"]["partner"]["typed"], s["info"]["partner"]["via"], s["info"]["partner"]["by"])
        for s in steps
    ] == [(a, "typed", "Wombat") for _, a in turns]


def test_two_browsers_sell_and_buy_a_car_and_one_who_leaves_ends_it_for_both(tmp_path) -> None:
    from playwright.sync_api import sync_playwright

    db = tmp_path / "served.db"
    flags = ["--task", "car-dealer", "--vs", "paired", "--seed", "3"]
    with served(db, extra=flags) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        try:
            seller = _arrive(browser, server.url, "Quokkie")
            seller.wait_for("Waiting for", timeout=45)
            buyer = _arrive(browser, server.url, "Wombat")
            buyer.wait_for("You are the buyer", timeout=45)
            _say(seller, "Welcome! The 2023 Subaru Solterra is electric, 45000 dollars.")
            buyer.wait_for("Solterra is", timeout=30)  # the seller's line on the buyer's screen
            _say(buyer, "Nice. Does it have third-row seating?")
            ep, steps = _steps(db, 1)
            _say(seller, "It does not, but it has blind spot monitoring.")
            buyer.wait_for("blind spot", timeout=30)
            buyer.page.context.close()  # the buyer closes the tab mid-episode
            seller.wait_for("left", timeout=45)
            ep, steps = _steps(db, 1, "abandoned")
        finally:
            browser.close()
    assert (ep["player"], ep["partner_name"], ep["status"]) == ("Quokkie", "Wombat", "abandoned")
    assert steps[0]["typed"].startswith("Welcome!") and steps[0]["info"]["by"] == "Quokkie"
    partner = steps[0]["info"]["partner"]
    assert (partner["typed"], partner["via"], partner["by"]) == (
        "Nice. Does it have third-row seating?", "typed", "Wombat")  # fmt: skip
