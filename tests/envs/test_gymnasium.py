"""Every task as a Gymnasium environment (``envs/gym.py``): registration, Gymnasium's own env
checker, seeding, faithfulness to the raw task, arbitrary text actions, rendering and closing."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import pytest
from gymnasium.envs.registration import parse_env_id
from gymnasium.utils.env_checker import check_env

import envs
from envs.chess.stockfish import StockfishNotFound, find_stockfish
from envs.core.checker import NASTY_INPUTS
from envs.gym import CHARSET, TextTaskEnv, gym_id, register

ENGINE_TASKS = {"chess", "endgames"}


def _has_stockfish() -> bool:
    try:
        find_stockfish()
    except StockfishNotFound:
        return False
    return True


NO_ENGINE = "Stockfish is not installed (apt-get install stockfish, or set STOCKFISH_PATH)"
needs_engine = [pytest.mark.stockfish, pytest.mark.skipif(not _has_stockfish(), reason=NO_ENGINE)]


def _task_params(task_ids: list[str]) -> list:
    return [pytest.param(t, marks=needs_engine) if t in ENGINE_TASKS else t for t in task_ids]


ALL = _task_params(envs.ids())


def _make(task_id: str, **kwargs) -> gymnasium.Env:
    return gymnasium.make(gym_id(task_id), **kwargs)


def test_every_task_id_has_a_gymnasium_id() -> None:
    assert len(envs.ids()) >= 11
    for task_id in envs.ids():
        spec = gymnasium.registry[gym_id(task_id)]
        assert spec.kwargs["task_id"] == task_id
        assert parse_env_id(spec.id) == ("lmrl", task_id, 0)
    assert gym_id("maze-fo") == "lmrl/maze-fo-v0"


def test_ids_gymnasium_cannot_read_are_mapped() -> None:
    assert gym_id("my task/a:b+c") == "lmrl/my_task_a_b_c-v0"
    assert parse_env_id(gym_id("my task/a:b+c")) == ("lmrl", "my_task_a_b_c", 0)
    try:
        assert register("two words") == "lmrl/two_words-v0"
        assert register("two words") == "lmrl/two_words-v0"  # again: nothing changes
        with pytest.raises(ValueError, match="already the id of task 'two words'"):
            register("two_words")
    finally:
        gymnasium.registry.pop("lmrl/two_words-v0", None)


@pytest.mark.parametrize("task_id", ALL)
def test_gymnasium_env_checker_passes(task_id: str) -> None:
    """Gymnasium's checker, its warnings as errors (an observation outside the space, a reused
    info dict, a seeded reset that does not reproduce, a render or a second close that fails)."""
    env = _make(task_id)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
    finally:
        env.close()


@pytest.mark.parametrize("task_id", ALL)
def test_random_text_from_the_action_space_is_played_never_raised(task_id: str) -> None:
    env = _make(task_id)
    lo, hi = env.unwrapped.task_spec.reward_range
    env.action_space.seed(0)
    obs, info = env.reset(seed=3)
    assert obs in env.observation_space and info == {"seed": 3}
    actions = [env.action_space.sample() for _ in range(6)] + NASTY_INPUTS[:6]
    try:
        for action in actions:
            obs, reward, terminated, truncated, info = env.step(action)
            assert obs in env.observation_space, (action[:20], obs[:80])
            assert type(reward) is float and lo <= reward <= hi
            assert type(terminated) is bool and type(truncated) is bool and type(info) is dict
            if terminated or truncated:
                env.reset()
    finally:
        env.close()


def _rollout(task_id: str, seed: int, steps: int) -> list:
    env = _make(task_id)
    env.action_space.seed(seed)
    out: list = [env.reset(seed=seed)]
    for _ in range(steps):
        out.append(step := env.step(env.action_space.sample()))
        if step[2] or step[3]:
            out.append(env.reset())  # unseeded: drawn from the env's seeded generator
    out.append(env.reset())
    env.close()
    return out


@pytest.mark.parametrize("task_id", ALL)
def test_a_seed_reproduces_a_run_and_another_seed_differs(task_id: str) -> None:
    a, b = _rollout(task_id, 5, 4), _rollout(task_id, 5, 4)
    assert a == b
    last_seed = a[-1][1]["seed"]
    assert type(last_seed) is int and last_seed != 5  # the unseeded reset drew an episode seed ...
    assert _rollout(task_id, 6, 4)[-1][1]["seed"] != a[-1][1]["seed"]  # ... from the seed


def _reference_policy(task_id: str) -> str:
    names = envs.policies(task_id)
    return "behaviour" if "behaviour" in names else names[0]


SHORT = {"chess": {"max_moves": 20}}
"""Options that keep a scripted episode short (a full game against Stockfish takes a second)."""


@pytest.mark.parametrize("task_id", ALL)
def test_an_episode_through_gymnasium_is_the_task_s_episode(task_id: str) -> None:
    """A scripted episode of the raw task, replayed through the env: same seed, same texts,
    rewards, flags and info, and every observation inside the observation space."""
    seed, options = 2, SHORT.get(task_id, {})
    policy = envs.make_policy(task_id, _reference_policy(task_id))
    episode = envs.run_episode(envs.make(task_id, **options), policy, seed)
    env = _make(task_id, **options)
    try:
        obs, info = env.reset(seed=seed)
        assert (obs, info) == (episode.first_observation, {"seed": seed})
        for tr in episode.transitions:
            step = env.step(tr.action)
            assert step == (tr.observation, tr.reward, tr.terminated, tr.truncated, dict(tr.info))
            assert step[0] in env.observation_space
        assert step[2] or step[3]
    finally:
        env.close()


def test_options_go_to_the_task_and_bad_ones_say_so() -> None:
    env = _make("wordle", words="small", max_guesses=3)
    assert env.unwrapped.task_spec.options["words"] == "small"
    obs, _ = env.reset(seed=0, options={"answer": "house"})
    assert obs == "Wordle:\n"
    assert env.step("c r a n e\n")[1:4] == (-1.0, False, False)  # not a word of the small game
    assert env.step("h o u s e\n")[1:4] == (0.0, True, False)
    env.close()
    with pytest.raises(ValueError, match="no option 'colour'"):
        _make("maze-fo", colour="red")
    maze = _make("maze-fo")
    obs, _ = maze.reset(seed=0, options={"init_position": (1, 1)})
    assert "Your current position is at position 1, 1." in obs
    assert maze.unwrapped.legal_actions() == [
        "move up\n",
        "move down\n",
        "move left\n",
        "move right\n",
    ]


def test_ansi_render_is_the_model_s_context() -> None:
    env = _make("wordle", render_mode="ansi")
    env.reset(seed=1)
    env.step("c r a n e\n")
    assert env.render() == envs.history_to_str(env.unwrapped.task.history())
    assert env.render().startswith("Wordle:\nc r a n e\n")
    plain = _make("maze-fo")
    plain.reset(seed=0)
    assert plain.render() is None
    with pytest.raises(ValueError, match="render_mode"):
        TextTaskEnv("maze-fo", render_mode="human")


def test_charset_holds_every_non_ascii_character_of_the_shipped_assets() -> None:
    """The tasks' own texts are ASCII; the assets (words, objects, cities, personas) are where
    anything else could come from: the cities' local names (``São Paulo``) are all there is."""
    root = Path(envs.__file__).parent
    found = {
        c
        for p in root.glob("*/**/assets/**/*")
        if p.is_file()
        for c in p.read_text(encoding="utf-8")
        if not c.isascii()
    }
    assert found and found <= set(CHARSET)


def test_make_without_importing_the_module_first() -> None:
    """``module:id`` is Gymnasium 1.x's way to load a plugin's ids; ``import envs`` alone never
    imports gymnasium."""
    code = (
        "import sys, envs\nenvs.ids()\nassert 'gymnasium' not in sys.modules\n"
        "import gymnasium\nenv = gymnasium.make('envs.gym:lmrl/maze-fo-v0')\n"
        "print(repr(env.reset(seed=4)[0]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == repr(envs.make("maze-fo").reset(4))


@pytest.mark.parametrize("task_id", _task_params(sorted(ENGINE_TASKS)))
def test_close_stops_stockfish_and_may_be_called_twice(task_id: str) -> None:
    env = _make(task_id)
    env.reset(seed=1)
    env.step(env.unwrapped.legal_actions()[0])  # the engine answers: its process runs now
    pid = env.unwrapped.task.engine_pid
    assert pid is not None
    env.close()
    env.close()
    assert env.unwrapped.task.engine_pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_vector_of_envs_plays_seeds_side_by_side() -> None:
    vec = gymnasium.make_vec(gym_id("maze-fo"), num_envs=2, vectorization_mode="sync")
    try:
        obs, info = vec.reset(seed=7)
        assert obs == (envs.make("maze-fo").reset(7), envs.make("maze-fo").reset(8))
        assert list(info["seed"]) == [7, 8]
        obs, reward, terminated, truncated, _ = vec.step(("move up\n", "fly\n"))
        assert list(reward) == [-1.0, -4.0] and not terminated.any() and not truncated.any()
    finally:
        vec.close()
