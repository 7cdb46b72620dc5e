"""Wordle rules, texts and policies against LMRL-Gym's behaviour (docs/tasks.md §3)."""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import envs
from envs.core.checker import check_task
from envs.wordle.engine import (
    FEEDBACK_TEXT,
    TEXT_CODE,
    default_vocab,
    expected_log_remaining,
    feedback_lmrl,
    feedback_real,
    load_vocab,
    nth_set_bit,
    partition_sizes,
    set_bits,
)
from envs.wordle.policies import best_guesses
from envs.wordle.task import LMRL_NORM, WordleTask


def fb(rule: str, guess: str, answer: str) -> str:
    f = feedback_real if rule == "real" else feedback_lmrl
    return FEEDBACK_TEXT[f(guess, answer)].strip()


@pytest.fixture
def small_vocab(tmp_path):
    words = [
        "crane",
        "slate",
        "salty",
        "salsa",
        "abide",
        "speed",
        "there",
        "eerie",
        "hello",
        "lolly",
        "allot",
        "atoll",
        "melee",
        "sheep",
        "geese",
        "liver",
        "level",
        "reeds",
    ]
    p = tmp_path / "vocab.txt"
    p.write_text("\n".join(words) + "\nnot-a-word\nTOOLONGWORD\n")
    return p


@pytest.mark.parametrize("task_id", ["wordle", "wordle-lmrl"])
@pytest.mark.parametrize("policy", ["behaviour", "strong", "random"])
def test_check_task(task_id, policy):
    check_task(task_id, policy=policy)


def test_check_task_with_a_vocab_file(small_vocab):
    check_task("wordle-lmrl", options={"vocab_file": str(small_vocab), "bad_word_reward": -10.0})


@pytest.mark.parametrize(
    ("guess", "answer", "real", "lmrl"),
    [
        ("salsa", "salty", "g g g b b", "g g g y y"),  # repeats in the guess
        ("speed", "abide", "b b y b y", "b b y y y"),
        ("eerie", "there", "y b y b g", "y y y b g"),
        ("lolly", "hello", "b y g g b", "y y g g b"),  # the greens use up both l's
        ("hello", "lolly", "b b g g y", "b b g g y"),  # repeats in the answer only
        ("geese", "sheep", "b y g y b", "b y g y y"),
        ("mamma", "madam", "g g y b y", "g g y y y"),  # one spare m: only the first is yellow
        ("allot", "atoll", "g y y y y", "g y y y y"),
        ("melee", "eerie", "b g b y g", "b g b y g"),
        ("crane", "crane", "g g g g g", "g g g g g"),
    ],
)
def test_feedback_rules(guess, answer, real, lmrl):
    assert fb("real", guess, answer) == real
    assert fb("lmrl", guess, answer) == lmrl


def test_feedback_texts():
    assert FEEDBACK_TEXT[0] == "b b b b b\n" and FEEDBACK_TEXT[242] == "g g g g g\n"
    assert TEXT_CODE["b y g b b\n"] == 0 * 81 + 1 * 27 + 2 * 9


@pytest.mark.parametrize("rule", ["real", "lmrl"])
def test_consistent_sets_match_brute_force(rule):
    v = default_vocab()
    f = feedback_real if rule == "real" else feedback_lmrl
    rng = random.Random(7)
    answers = v.answers
    for _ in range(40):
        guess = rng.choice(v.guesses)
        target = rng.choice(answers)
        code = f(guess, target)
        got = {answers[k] for k in set_bits(v.consistent_with(guess, code, rule))}
        assert got == {a for a in answers if f(guess, a) == code}
        assert target in got


@pytest.mark.parametrize("rule", ["real", "lmrl"])
def test_partition_matches_brute_force(rule):
    v = default_vocab()
    f = feedback_real if rule == "real" else feedback_lmrl
    rng = random.Random(3)
    mask = 0
    for k in rng.sample(range(v.size), 300):
        mask |= 1 << k
    members = [v.answers[k] for k in set_bits(mask)]
    for guess in ("eerie", "salsa", "crane", "mamma", "geese"):
        sizes = partition_sizes(mask, v.split_factors(guess, rule))
        assert sorted(sizes) == sorted(Counter(f(guess, a) for a in members).values())


def test_best_guess_maximises_information_gain(small_vocab):
    words = [
        w for w in small_vocab.read_text().split() if len(w) == 5 and w.isalpha() and w.islower()
    ]
    v = load_vocab(tuple(words), tuple(words))
    for rule, f in (("real", feedback_real), ("lmrl", feedback_lmrl)):

        def score(g: str, f=f) -> float:
            counts = Counter(f(g, a) for a in words).values()
            return sum(c * math.log(c) for c in counts) / len(words)

        best = {v.answers[k] for k in best_guesses(v, rule, v.full)}
        low = min(score(w) for w in words)
        assert best == {w for w in words if abs(score(w) - low) < 1e-12}
        assert expected_log_remaining([1] * len(words), len(words)) == 0.0


def test_bit_helpers():
    mask = (1 << 3) | (1 << 64) | (1 << 200)
    assert set_bits(mask) == [3, 64, 200]
    assert [nth_set_bit(mask, i) for i in range(3)] == [3, 64, 200]
    with pytest.raises(IndexError):
        nth_set_bit(mask, 3)
    assert set_bits(0) == []


def test_texts_rewards_and_horizon(small_vocab):
    t = envs.make("wordle", vocab_file=str(small_vocab))
    assert t.reset(0, {"answer": "salty"}) == "Wordle:\n"
    s = t.step("s a l s a\n")
    assert s.observation == "g g g b b\n" and s.reward == -1.0 and not s.terminated
    s = t.step("CRANE\n")  # no lower-casing, as in LMRL
    assert s.observation == "\n" and s.reward == -1.0 and s.info["invalid"]
    s = t.step(" s l a t e ")  # spaces removed, whitespace stripped
    assert s.observation == "g y y g b\n"
    s = t.step("salty")
    assert s.observation == "g g g g g\n" and s.reward == 0.0 and s.terminated and s.info["success"]
    assert t.state()["answer"] == "salty" and t.state()["success"] is True
    assert "".join(x.text for x in t.history()) == (
        "Wordle:\ns a l s a\ng g g b b\nC R A N E\n\ns l a t e\ng y y g b\ns a l t y\ng g g g g\n"
    )
    with pytest.raises(RuntimeError):
        t.step("salty")


def test_lmrl_literal_transcript(small_vocab):
    # docs/tasks.md §3.2: LMRL-Gym's transcript guesses 'crane', which is not in its 431-word list; here 'xxxxx' plays that part.
    t = envs.make("wordle-lmrl", vocab_file=str(small_vocab))
    t.reset(3, {"answer": "hello"})
    rewards = [t.step(a).reward for a in ("xxxxx", "x x x x x\n", "slate")]
    assert rewards == [-1.0, -1.0, -1.0]
    assert "".join(x.text for x in t.history()) == (
        "Wordle:\nx x x x x\n\nx x x x x\n\ns l a t e\nb y b b y\n"
    )


def test_six_guesses_end_the_game_and_invalid_guesses_count():
    t = envs.make("wordle", bad_word_reward=-10.0)
    t.reset(1, {"answer": "crane"})
    total = 0.0
    for i, a in enumerate(["", "slates", "zzzzz", "salty", "about", "there"]):
        s = t.step(a)
        total += s.reward
        assert s.terminated == (i == 5)
    assert total == -10.0 * 3 - 3 and s.info == {"success": False}
    assert t.state()["answer"] == "crane" and t.state()["success"] is False
    hist = [x.text for x in t.history() if x.is_action]
    assert hist[:2] == ["\n", "s l a t e s\n"]


def test_solving_at_guess_k_returns_minus_k_minus_one():
    t = envs.make("wordle")
    t.reset(0, {"answer": "crane"})
    rewards = [t.step(w).reward for w in ("slate", "about", "crane")]
    assert sum(rewards) == -2.0


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_a_guess_or_an_invalid_action(text):
    t = WordleTask("real", bad_word_reward=-3.0)
    t.reset(5)
    s = t.step(text)
    word = text.strip().replace(" ", "")
    if word in t.vocab.guess_index:
        assert s.observation in TEXT_CODE and s.reward in (0.0, -1.0)
    else:
        assert s.observation == "\n" and s.reward == -3.0 and s.info["invalid"]
    try:
        parsed = t.parse_input(text)
    except envs.InvalidInput:
        pass
    else:
        assert parsed.replace(" ", "").strip() in t.vocab.guess_index


def test_huge_and_strange_inputs():
    t = envs.make("wordle-lmrl")
    t.reset(2)
    for a in ("x" * 100_000, "ünïcödé", "\x00\x01\x1b[31m\n", "c r a n e" * 3):
        assert t.step(a).observation == "\n"
    assert t.history()[-2].text == " ".join("cranecranecrane") + "\n"


def test_parse_input_for_people():
    t = envs.make("wordle")
    t.reset(0)
    assert t.parse_input("  Crane ") == "c r a n e\n"
    assert t.parse_input("c r a n e") == "c r a n e\n"
    with pytest.raises(envs.InvalidInput, match="five letters"):
        t.parse_input("cran")
    with pytest.raises(envs.InvalidInput, match="not in the word list"):
        t.parse_input("qqqqq")
    with pytest.raises(envs.InvalidInput, match="a to z"):
        t.parse_input("cr4ne")
    with pytest.raises(envs.InvalidInput):
        t.parse_input("")


def test_state_keyboard_and_hint():
    t = envs.make("wordle")
    t.reset(0, {"answer": "abide"})
    n0 = t.state()["consistent"]
    t.step("speed")
    s = t.state()
    assert s["rows"][0] == {"word": "speed", "valid": True, "marks": ["b", "b", "y", "b", "y"]}
    assert s["letters"] == {"s": "b", "p": "b", "e": "y", "d": "y"}
    assert s["answer"] is None and 0 < s["consistent"] < n0
    assert "abide" in t.consistent_words()
    t.step("zzzzz")
    assert t.state()["rows"][1]["valid"] is False


def test_default_word_lists():
    v = default_vocab()
    assert 2000 <= v.size <= 2500 and len(v.guesses) > 3 * v.size
    assert set(v.answers) <= set(v.guesses)
    assert all(len(w) == 5 and w.isalpha() and w.islower() and w.isascii() for w in v.guesses)
    assert len(envs.make("wordle").legal_actions()) == len(v.guesses)


def test_small_closed_word_list():
    """words=small: the 400 most common answers, the only allowed guesses (LMRL-sized game)."""
    t = envs.make("wordle", words="small")
    assert t.vocab.size == 400 and t.vocab.answers == t.vocab.guesses
    assert set(t.vocab.answers) <= set(default_vocab().answers)
    assert t.spec.options["words"] == "small" and "words" not in envs.make("wordle").spec.options
    t.reset(seed=3)
    assert t.step("q u i l t\n").info.get("invalid")  # a real word, but not in the closed list
    check_task("wordle", policy="behaviour", options={"words": "small"})
    mean, wins = _play("wordle", "behaviour", 400, words="small")
    assert -4.5 < mean < -3.6 and 0.6 < wins < 0.8  # LMRL's data: -4.12, success 0.70
    for bad in ({"words": "huge"}, {"words": "small", "vocab_file": "x.txt"}):
        with pytest.raises(ValueError, match="word list|either"):
            envs.make("wordle", **bad)


def test_random_agent_does_not_share_the_answer_stream():
    """The answer is drawn from random.Random(seed); on a closed list where the actions are the
    answers, an agent on the same stream would guess the answer first every time."""
    mean, wins = _play("wordle", "random", 200, words="small")
    assert mean < -5.5 and wins < 0.1


def test_norm_constants_only_for_lmrl_setup(tmp_path, monkeypatch):
    import envs.wordle.task as wordle_task
    from envs.wordle.engine import list_digest

    words = sorted({"".join(random.Random(i).choices("abcdefghij", k=5)) for i in range(2000)})[
        :431
    ]
    p = tmp_path / "v431.txt"
    p.write_text("\n".join(words))
    assert envs.make("wordle-lmrl", vocab_file=str(p)).spec.norm is None  # 431 words, not LMRL's
    monkeypatch.setattr(wordle_task, "LMRL_LIST_SHA256", list_digest(words))  # as if they were
    assert envs.make("wordle-lmrl", vocab_file=str(p)).spec.norm == LMRL_NORM
    assert envs.make("wordle", vocab_file=str(p)).spec.norm is None
    assert envs.make("wordle-lmrl").spec.norm is None
    assert envs.make("wordle-lmrl", vocab_file=str(p)).spec.options["vocab_file"] == str(p)
    with pytest.raises(ValueError, match="cannot read"):
        envs.make("wordle", vocab_file=str(tmp_path / "missing.txt"))


def _play(task_id: str, policy: str, n: int, **opts) -> tuple[float, float]:
    t = envs.make(task_id, **opts)
    rets, wins = [], 0
    for seed in range(n):
        ep = envs.run_episode(t, envs.make_policy(task_id, policy), seed)
        rets.append(ep.total_return)
        wins += bool(ep.transitions[-1].info.get("success"))
    return statistics.mean(rets), wins / n


def test_policies_strong_beats_behaviour():
    strong, strong_wins = _play("wordle", "strong", 150)
    behaviour, behaviour_wins = _play("wordle", "behaviour", 300)
    assert strong > -3.2 and strong_wins >= 0.95
    assert -5.5 < behaviour < -4.0 and 0.4 < behaviour_wins < 0.7
    assert strong > behaviour + 1.5


def test_policies_are_seeded():
    t = envs.make("wordle-lmrl")
    for pol in ("behaviour", "strong"):
        a = envs.run_episode(t, envs.make_policy("wordle-lmrl", pol), 11)
        b = envs.run_episode(t, envs.make_policy("wordle-lmrl", pol), 11)
        assert [x.action for x in a.transitions] == [x.action for x in b.transitions]
        assert all(x.action.endswith("\n") and len(x.action) == 10 for x in a.transitions)


def test_the_consistent_player_guesses_only_answers_the_feedback_allows():
    task, player = envs.make("wordle", words="small"), envs.make_policy("wordle", "consistent")
    assert player.name == "consistent"
    wins = 0
    for seed in range(40):
        task.reset(seed)
        player.reset(task, seed)
        while True:
            allowed = set(task.consistent_words())
            guess = player.act(task.history()).replace(" ", "").strip()
            assert guess in allowed
            st = task.step(" ".join(guess) + "\n")
            if st.terminated or st.truncated:
                wins += bool(st.info.get("success"))
                break
    assert wins >= 36  # it uses every piece of feedback: ~99.8 % of games won on the small list
    mean, _ = _play("wordle", "consistent", 60, words="small")
    behaviour, _ = _play("wordle", "behaviour", 60, words="small")
    assert mean > behaviour + 1.0
