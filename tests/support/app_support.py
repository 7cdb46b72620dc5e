"""Helpers for driving the app in tests (a support module: test files import it, never each other)."""

from __future__ import annotations


def spy_notifications(app) -> list[tuple[str, str, str, float | None]]:
    """Record (message, title, severity, timeout) of every toast the app shows."""
    seen: list[tuple[str, str, str, float | None]] = []
    real = app.notify

    def notify(message, *, title="", severity="information", timeout=None, **kw):
        seen.append((message, title, severity, timeout))
        return real(message, title=title, severity=severity, timeout=timeout, **kw)

    app.notify = notify
    return seen


async def settle(app, tries: int = 20) -> None:
    """Wait until the app's workers are done. An exclusive worker (the runs screen's poll) may be
    cancelled by a newer one its timer started meanwhile (a loaded machine): wait for that one."""
    from textual.worker import WorkerCancelled

    for _ in range(tries):
        try:
            await app.workers.wait_for_complete()
            return
        except WorkerCancelled:
            continue
    await app.workers.wait_for_complete()


async def wait_for(pilot, check, what: str, timeout: float = 60) -> None:
    """Pause until ``check()`` holds, by the clock: a loaded machine (CI's two cores running
    tests side by side) may lay a screen out or scroll it some pauses later than an idle one."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"never happened within {timeout:g} s: {what}")
