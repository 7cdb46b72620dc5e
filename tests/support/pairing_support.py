"""Helpers for the paired-episode tests (a support module: test files import it, never each
other)."""

from __future__ import annotations

import threading

from data.pairing import PartnerLeft
from envs.players.human import HumanAgent


def oracle_answers(mirror, replies: list[str]) -> threading.Thread:
    """The oracle's app: its agent (ann) moves when her question arrives; bo types each reply.
    It stops when bo has no more replies or the pairing ends (the app is stopped)."""
    assert isinstance(mirror.partner, HumanAgent)
    answers = iter(replies)
    mirror.partner.on_request = lambda role, history: mirror.partner.answer(next(answers))

    def play() -> None:
        try:
            while not mirror.done:
                mirror.agent_step(mirror.agent_action())
        except (PartnerLeft, StopIteration):
            pass

    t = threading.Thread(target=play, daemon=True)
    t.start()
    return t
