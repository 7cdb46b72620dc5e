"""Per-annotator figures, player names and session notes (data/annotators.py) on a real store."""

from __future__ import annotations

import pytest
from support.annotator_lab import MAZE, TQ, build_lab

from data.annotators import (
    MAX_PLAYER_NAME,
    annotator_figures,
    note_session,
    player_meta,
    player_name_error,
    register_player,
    set_session_note,
)
from data.session import PlaySession
from envs.core import InvalidInput


def test_figures_per_annotator(store):
    build_lab(store)
    rows = {r["player"]: r for r in annotator_figures(store)}
    assert list(rows) == ["ann", "bob", "cy"]  # the scripted episode has no player
    ann, bob, cy = rows["ann"], rows["bob"], rows["cy"]
    assert (ann["episodes"], ann["finished"]) == (2, 1)
    assert ann["seconds"] == pytest.approx(90 + 30, abs=0.01)
    assert ann["success_rate"] == 1.0 and ann["mean_return"] == -2.0  # the finished maze only
    assert ann["think_ms"] == pytest.approx((1000 + 2000 + 3000 + 4000) / 4)
    assert ann["attempts"] == 3 and ann["labels"] == 2  # 2 in a step, 1 after the last one
    assert (bob["episodes"], bob["finished"], bob["success_rate"], bob["mean_return"]) == (
        1,
        1,
        0.0,
        -2.0,
    )
    assert bob["seconds"] == pytest.approx(60, abs=0.01)
    assert bob["think_ms"] == pytest.approx(7000)  # his answers, not the scripted guesser's 50 ms
    assert (bob["attempts"], bob["labels"]) == (0, 1)
    assert cy == {
        "player": "cy",
        "episodes": 0,
        "finished": 0,
        "seconds": 0,
        "success_rate": None,
        "mean_return": None,
        "think_ms": None,
        "attempts": 0,
        "labels": 0,
    }


def test_figures_of_one_task(store):
    build_lab(store)
    rows = {r["player"]: r for r in annotator_figures(store, task=MAZE)}
    assert list(rows) == ["ann", "bob"]  # cy did nothing; bob only labelled a maze
    assert (rows["ann"]["episodes"], rows["ann"]["seconds"], rows["ann"]["labels"]) == (
        1,
        pytest.approx(90),
        0,
    )
    assert rows["ann"]["think_ms"] == pytest.approx(2000)
    assert (rows["bob"]["episodes"], rows["bob"]["labels"], rows["bob"]["think_ms"]) == (0, 1, None)
    tq = {r["player"]: r for r in annotator_figures(store, task=TQ)}
    assert (tq["ann"]["episodes"], tq["ann"]["finished"], tq["ann"]["success_rate"]) == (1, 0, None)
    assert tq["ann"]["labels"] == 2 and tq["ann"]["attempts"] == 0


def test_empty_store_has_no_annotators(store):
    assert annotator_figures(store) == []


def test_player_names(store):
    assert player_name_error("") and player_name_error("   ") and player_name_error("a\tb")
    assert player_name_error("x" * (MAX_PLAYER_NAME + 1))
    assert player_name_error("  Ann Lee ") is None
    with pytest.raises(ValueError):
        register_player(store, " ")
    assert register_player(store, "  Ann Lee ") == "Ann Lee"
    first = player_meta(store, "Ann Lee")["last_seen"]
    register_player(store, "Ann Lee")  # a second start: one player, seen again
    assert player_meta(store, "Ann Lee")["last_seen"] >= first
    assert [r["player"] for r in annotator_figures(store)] == ["Ann Lee"]
    assert player_meta(store, "nobody") is None


def test_session_note_kept_with_the_episode_and_its_attempts(store):
    session = PlaySession(store, MAZE, seed=2, player="ann")
    session.start()
    note_session(session, "  on a laptop, tired ")
    with pytest.raises(InvalidInput):
        session.human_input("fly away")
    session.abandon()  # the refused input is written into meta when the episode ends
    meta = store.episode(session.episode_id)["meta"]
    assert meta["session_note"] == "on a laptop, tired"
    assert [a["typed"] for a in meta["attempts"]] == ["fly away"]


def test_set_and_clear_session_notes(store):
    ids = build_lab(store)
    set_session_note(store, [ids["maze"], ids["quit"]], "first session")
    assert store.episode(ids["maze"])["meta"] == {
        "attempts": [{"typed": "swim"}],
        "session_note": "first session",
    }
    assert store.episode(ids["quit"])["meta"] == {"session_note": "first session"}
    assert store.episode(ids["answered"])["meta"] == {}
    set_session_note(store, [ids["maze"]], "  ")
    assert store.episode(ids["maze"])["meta"] == {"attempts": [{"typed": "swim"}]}
