"""Chat-message observations of the Gymnasium envs (``observation_format="messages"``) and the
partner's seat (``side="partner"``): every task, either side where a task has two."""

from __future__ import annotations

import math
import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import envs
from envs.adapters.chat import episode_messages, resolve_side, system_prompt
from envs.gym import gym_id

SHORT = {"chess": {"max_moves": 12}}
TWO_SIDED = [t for t in envs.ids() if len(envs.spec(t).roles) > 1]


def _make(task_id: str, **kwargs):
    return gymnasium.make(gym_id(task_id), disable_env_checker=True, **kwargs)


def _policy(task_id: str) -> str:
    names = envs.policies(task_id)
    return "behaviour" if "behaviour" in names else names[0]


@pytest.mark.parametrize("task_id", envs.ids())
def test_a_messages_episode_is_the_text_episode_as_a_conversation(task_id: str) -> None:
    """A scripted episode of the raw task, played through the messages env with the actions as
    a chat model writes them (no closing newline): the same rewards and flags, and a
    conversation of the side's rules, every observation and every action in order."""
    seed, options = 4, SHORT.get(task_id, {})
    episode = envs.run_episode(
        envs.make(task_id, **options), envs.make_policy(task_id, _policy(task_id)), seed
    )
    env = _make(task_id, observation_format="messages", **options)
    try:
        messages, info = env.reset(seed=seed)
        assert info == {"seed": seed} and messages in env.observation_space
        rewards = []
        for tr in episode.transitions:
            messages, reward, terminated, truncated, _ = env.step(tr.action.rstrip("\n"))
            rewards.append(reward)
            assert (terminated, truncated) == (tr.terminated, tr.truncated)
        assert rewards == [tr.reward for tr in episode.transitions]
        system = system_prompt(env.unwrapped.task, envs.spec(task_id).roles[0])
        turns = [(tr.action, tr.observation) for tr in episode.transitions]
        assert messages == episode_messages(system, episode.first_observation, turns)
        assert messages[0] == {"role": "system", "content": system} and system
        assert messages[1]["role"] == "user" and messages[2]["role"] == "assistant"
        assert messages[2]["content"] == episode.transitions[0].action.rstrip("\n")
    finally:
        env.close()


def test_the_text_format_stays_the_default_and_a_bad_format_or_side_says_so() -> None:
    env = _make("wordle")
    assert isinstance(env.reset(seed=1)[0], str)
    env.close()
    with pytest.raises(ValueError, match="observation_format must be one of text, messages"):
        _make("wordle", observation_format="chat")
    with pytest.raises(ValueError, match="wordle: side must be agent .* one side"):
        _make("wordle", side="partner")
    with pytest.raises(ValueError, match="side must be agent \\(guesser\\) or oracle"):
        resolve_side(envs.spec("twenty-questions"), "buyer")


@pytest.mark.parametrize("task_id", ["wordle", "twenty-questions"])
def test_gymnasium_checker_passes_on_messages(task_id: str) -> None:
    env = _make(task_id, observation_format="messages")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
    finally:
        env.close()


REPLIES = {"chess": "", "twenty-questions": "No.", "guess-city": "I cannot say."}


@pytest.mark.parametrize("task_id", TWO_SIDED)
def test_the_partner_side_hears_the_task_s_questions_and_its_replies_are_played(
    task_id: str,
) -> None:
    """Seated as the partner: the observation is what the task asks its partner (the oracle's
    secret and question, the buyer's persona and the seller's line, the board for the chess
    opponent), the reply goes into the task, and the episode ends with the acting side's
    return in the info."""
    options = SHORT.get(task_id, {})
    env = _make(
        task_id, side="partner", observation_format="messages", partner_reward="zero-sum", **options
    )
    role = envs.spec(task_id).roles[1]
    try:
        messages, _ = env.reset(seed=2)
        assert messages[0] == {"role": "system", "content": system_prompt(env.unwrapped.task, role)}
        assert messages[-1]["role"] == "user" and messages[-1]["content"]
        total, agent_rewards, replies = 0.0, [], []
        done = False
        while not done:
            reply = REPLIES.get(task_id, "Too expensive for me.")
            if task_id in ("chess", "endgames"):  # the board the opponent is asked about
                board = env.unwrapped.task.board
                reply = board.san(min(board.legal_moves, key=str))
            messages, reward, terminated, truncated, info = env.step(reply)
            replies.append(reply)
            total += reward
            agent_rewards += info["agent_rewards"]
            done = terminated or truncated
            assert len(replies) <= 40, "the episode should have ended"
        said = [m["content"] for m in messages if m["role"] == "assistant"]
        assert said == replies
        assert math.isclose(total, -math.fsum(agent_rewards))
        assert math.isclose(info["agent_return"], math.fsum(agent_rewards))
    finally:
        env.close()
