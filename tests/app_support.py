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
