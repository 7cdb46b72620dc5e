"""Random text and numbers into the store's writers (hypothesis): what is written reads back
equal (its text after :func:`envs.core.clean_text`), or the writer raises a ValueError (or
StoreError) saying what is wrong, and the store is unchanged and still takes writes.

Few examples by default (derandomized); ``LMRL_HEAVY=1`` tries many.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fuzz_text import ANY_CHAR, fuzz, odd_text

from data.checks import StoreError
from data.recorder import BatchRecorder
from data.store import EpisodeRecord, StepRecord, Store, Who
from envs.core import clean_text

FUZZ = fuzz(25, 400)
text = odd_text(huge=20_000)
short = st.text(ANY_CHAR, max_size=30)
HUGE = st.sampled_from([10**400, -(10**400)])
"""Past the largest float."""
numbers = st.one_of(
    st.integers(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    HUGE,
)
ints = st.one_of(st.integers(-1000, 1000), st.integers(-(2**70), 2**70), HUGE)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | short,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(short, inner, max_size=3),
    max_leaves=6,
)
objects = st.dictionaries(short, json_values, max_size=4)

INT64 = range(-(2**63), 2**63)


def _clean(v):
    """What the store keeps of a JSON value: its text cleaned."""
    if isinstance(v, str):
        return clean_text(v)
    if isinstance(v, list):
        return [_clean(x) for x in v]
    if isinstance(v, dict):
        return {clean_text(k): _clean(x) for k, x in v.items()}
    return v


def _good_number(r) -> bool:
    """A reward the store keeps: any finite float, or an int a float can hold."""
    return isinstance(r, int) and abs(r) < 2**1023 or isinstance(r, float) and math.isfinite(r)


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory):
    s = Store(tmp_path_factory.mktemp("fuzz") / "fuzz.db")
    yield s
    s.close()


def _unchanged_and_writable(store: Store, before: int) -> None:
    assert store.count() == before
    eid = store.start_episode("maze-fo", 1, 0, "x\n", Who("human", "human"))
    store.add_step(eid, 0, "a\n", "b\n", 0.0, terminated=True)
    store.finish_episode(eid)


@FUZZ
@given(
    task=short,
    version=ints,
    seed=st.none() | ints,
    first=text,
    kind=short,
    name=short,
    player=st.none() | short,
    source=short,
    options=objects,
    meta=objects,
)
def test_start_episode(
    fuzz_store: Store, task, version, seed, first, kind, name, player, source, options, meta
) -> None:
    store, before = fuzz_store, fuzz_store.count()
    try:
        eid = store.start_episode(
            task,
            version,
            seed,
            first,
            Who(kind, name),
            partner=Who(name, kind),
            player=player,
            source=source,
            options=options,
            meta=meta,
        )
    except (ValueError, StoreError) as e:
        assert str(e) and "\n" not in str(e)
        assert (
            version not in INT64
            or (seed is not None and seed not in INT64)
            or (player is not None and not player.strip())
        )
        _unchanged_and_writable(store, before)
        return
    ep = store.episode(eid)
    assert (ep["task"], ep["task_version"], ep["seed"], ep["first_observation"]) == (
        clean_text(task),
        version,
        seed,
        clean_text(first),
    )
    assert (ep["agent_kind"], ep["agent_name"], ep["partner_kind"], ep["partner_name"]) == (
        clean_text(kind),
        clean_text(name),
        clean_text(name),
        clean_text(kind),
    )
    assert ep["player"] == (None if player is None else clean_text(player))
    assert ep["source"] == clean_text(source)
    assert ep["options"] == _clean(options) and ep["meta"] == _clean(meta)


@FUZZ
@given(
    action=text,
    typed=st.none() | text,
    observation=text,
    reward=numbers,
    info=objects,
    think_ms=st.none() | ints,
    role=short,
    terminated=st.booleans(),
)
def test_add_step_and_finish(
    fuzz_store: Store, action, typed, observation, reward, info, think_ms, role, terminated
) -> None:
    store = fuzz_store
    eid = store.start_episode("maze-fo", 1, 0, "x\n", Who("human", "human"))
    try:
        store.add_step(
            eid,
            0,
            action,
            observation,
            reward,
            terminated,
            info=info,
            typed=typed,
            think_ms=think_ms,
            role=role,
        )
    except (ValueError, StoreError) as e:
        assert str(e) and "\n" not in str(e)
        assert not _good_number(reward) or (think_ms is not None and think_ms not in INT64)
        assert store.steps(eid) == [] and store.episode(eid)["n_steps"] == 0
        return
    (row,) = store.steps(eid)
    assert (row["action"], row["observation"], row["typed"], row["role"]) == (
        clean_text(action),
        clean_text(observation),
        None if typed is None else clean_text(typed),
        clean_text(role),
    )
    assert row["reward"] == float(reward) and row["think_ms"] == think_ms
    assert row["info"] == _clean(info) and row["terminated"] == int(terminated)
    store.finish_episode(eid, success=terminated, meta=info)
    ep = store.episode(eid)
    assert (
        ep["status"] == "finished" and ep["return"] == float(reward) and ep["meta"] == _clean(info)
    )


@FUZZ
@given(label=text, value=st.none() | text, author=st.none() | short, step_idx=st.none() | ints)
def test_add_label(fuzz_store: Store, label, value, author, step_idx) -> None:
    store = fuzz_store
    eid = store.start_episode("maze-fo", 1, 0, "x\n", Who("human", "human"))
    try:
        lid = store.add_label(eid, label, value, step_idx=step_idx, author=author)
    except (ValueError, StoreError) as e:
        assert str(e) and "\n" not in str(e)
        assert not label.strip() or (step_idx is not None and step_idx not in INT64)
        assert store.labels(eid) == []
        return
    (row,) = store.labels(eid)
    assert row["id"] == lid and row["label"] == clean_text(label.strip())[:200]
    assert row["value"] == (None if value is None else clean_text(value))
    assert row["author"] == (None if author is None else clean_text(author))
    assert row["step_idx"] == step_idx


@FUZZ
@given(name=short, kind=short)
def test_ensure_player(fuzz_store: Store, name, kind) -> None:
    try:
        fuzz_store.ensure_player(name, kind)
    except (ValueError, StoreError) as e:
        assert str(e) and "\n" not in str(e) and not name.strip()
        return
    (row,) = fuzz_store.db.execute(
        "SELECT name FROM players WHERE name = ?", [clean_text(name)]
    ).fetchall()
    assert row[0] == clean_text(name)


@FUZZ
@given(
    steps=st.lists(st.tuples(text, text, numbers, objects), min_size=1, max_size=4),
    seed=st.none() | ints,
    player=st.none() | short,
    labels=st.lists(st.tuples(short, st.none() | short), max_size=2),
)
def test_batch_write(fuzz_store: Store, steps, seed, player, labels) -> None:
    store, before = fuzz_store, fuzz_store.count()
    recs = [
        StepRecord(a, o, r, i == len(steps) - 1, False, info)
        for i, (a, o, r, info) in enumerate(steps)
    ]
    rec = EpisodeRecord(
        "maze-fo",
        1,
        seed,
        "first\n",
        recs,
        Who("scripted", "behaviour"),
        player=player,
        labels=[{"label": lab, "value": v, "step_idx": 0} for lab, v in labels],
    )
    try:
        with BatchRecorder(store, batch=2) as rec_:
            rec_.add(rec)
    except (ValueError, StoreError) as e:
        assert str(e) and "\n" not in str(e)
        bad_seed = seed is not None and seed not in INT64
        assert (
            bad_seed
            or not all(_good_number(r) for _, _, r, _ in steps)
            or (player is not None and not player.strip())
        )
        _unchanged_and_writable(store, before)
        return
    eid = store.last_episode_id()
    got = store.steps(eid)
    assert [(s["action"], s["observation"], s["reward"], s["info"]) for s in got] == [
        (clean_text(a), clean_text(o), float(r), _clean(info)) for a, o, r, info in steps
    ]
    assert store.episode(eid)["seed"] == seed
    assert [(lab["label"], lab["value"]) for lab in store.labels(eid)] == [
        (clean_text(lab), None if v is None else clean_text(v)) for lab, v in labels
    ]


@FUZZ
@given(typed=st.lists(text, min_size=1, max_size=4), strict=st.booleans(), player=short)
def test_a_recorded_play_session_keeps_what_was_typed(
    fuzz_store: Store, typed, strict, player
) -> None:
    """A person's odd keys through PlaySession and its recorder: every step written reads back
    as played (typed text cleaned), every refused input is kept as an attempt."""
    from data.session import PlaySession
    from envs.core import InvalidInput

    session = PlaySession(fuzz_store, "wordle", player=player, seed=3, strict=strict)
    session.start()
    played = []
    for t in typed:
        try:
            out = session.human_input(t)
        except InvalidInput:
            continue
        played.append((clean_text(t), out.action))
        if session.done:
            break
    if not session.done:
        session.abandon()
    steps = fuzz_store.steps(session.episode_id)
    assert [(s["typed"], s["action"]) for s in steps] == played
    ep = fuzz_store.episode(session.episode_id)
    assert ep["player"] == clean_text(player) and ep["n_steps"] == len(played)
    ended = bool(steps) and bool(steps[-1]["terminated"] or steps[-1]["truncated"])
    assert ep["status"] == ("finished" if ended else "abandoned")
