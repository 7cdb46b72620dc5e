"""A checkpoint in its own process (envs.players.process_agent + training.agents.server) plays, explains
and maps exactly as the same checkpoint loaded here; failures come back as clear messages."""

from __future__ import annotations

import io
import json
import threading
import time

import pytest

torch = pytest.importorskip("torch")

from support.checkpoint_support import tiny_checkpoint  # noqa: E402

import envs  # noqa: E402
from envs.players.agents import AgentChoiceError, make_agent  # noqa: E402
from envs.players.explanation import explanation_from_dict, explanation_to_dict  # noqa: E402
from envs.players.process_agent import AgentProcessError, ProcessAgent  # noqa: E402
from training.agents.checkpoint_agent import load_agent  # noqa: E402
from training.agents.server import serve  # noqa: E402


@pytest.fixture(scope="module")
def ilql(tmp_path_factory):
    return tiny_checkpoint(tmp_path_factory.mktemp("ckpt"), "ilql")


@pytest.fixture(scope="module")
def served(ilql):
    agent = ProcessAgent(str(ilql), "maze-fo").load()
    yield agent
    agent.close()


def test_it_plays_and_explains_as_the_checkpoint_loaded_here(ilql, served):
    here = load_agent(ilql)
    assert served.kind == "checkpoint" and served.name == here.name
    assert (
        served.meta["task"] == "maze-fo"
        and served.meta["task_options"] == here.meta["task_options"]
    )
    for seed in (0, 1):
        a, b = envs.make("maze-fo"), envs.make("maze-fo")
        a.reset(seed)
        b.reset(seed)
        served.reset(a, seed)
        here.reset(b, seed)
        for _ in range(4):
            assert served.explain(a.history(), a.legal_actions()) == here.explain(
                b.history(), b.legal_actions()
            )
            move = served.act(a.history())
            assert move == here.act(b.history())
            step = a.step(move)
            b.step(move)
            if step.terminated or step.truncated:
                break
    maze = envs.make("maze-fo")
    assert served.policy_map(maze) == here.policy_map(maze)


def test_an_explanation_survives_json(ilql):
    here = load_agent(ilql)
    task = envs.make("maze-fo")
    task.reset(3)
    expl = here.explain(task.history(), task.legal_actions())
    assert explanation_from_dict(json.loads(json.dumps(explanation_to_dict(expl)))) == expl


@pytest.mark.slow  # starts model processes that fail to load (~5 s)
def test_a_bad_choice_gives_the_loaders_own_message(tmp_path):
    missing = str(tmp_path / "no-such-checkpoint")
    with pytest.raises(AgentChoiceError) as here:
        make_agent("maze-fo", missing)
    agent = ProcessAgent(missing, "maze-fo")
    with pytest.raises(AgentChoiceError) as there:
        agent.load()
    assert str(there.value) == str(here.value)
    assert not agent.alive  # a failed load ends its process
    broken = tmp_path / "broken"
    (broken / "checkpoint").mkdir(parents=True)
    (broken / "checkpoint" / "config.json").write_text("{not json")
    with pytest.raises(AgentChoiceError, match="checkpoint"):
        ProcessAgent(str(broken), "maze-fo").load()


@pytest.mark.slow  # a model process killed and waited for (~12 s on 2 cores)
def test_a_killed_process_is_a_clear_error_and_close_ends_it(ilql):
    agent = ProcessAgent(str(ilql), "maze-fo").load()
    task = envs.make("maze-fo")
    task.reset(0)
    agent.reset(task, 0)
    agent._proc.kill()
    with pytest.raises(AgentProcessError, match="process ended"):
        agent.act(task.history())
    agent.close()
    agent.close()  # twice is fine
    quiet = ProcessAgent(str(ilql), "maze-fo").load()
    quiet.close()
    assert quiet._proc.wait(timeout=10) is not None
    with pytest.raises(AgentProcessError, match="closed"):
        quiet.act(task.history())


def test_closing_during_a_load_stops_it_at_once(ilql):
    agent = ProcessAgent(str(ilql), "maze-fo")
    failed: list[BaseException] = []

    def load() -> None:
        try:
            agent.load()
        except BaseException as e:  # noqa: BLE001 - what the loading thread saw
            failed.append(e)

    thread = threading.Thread(target=load)
    thread.start()
    time.sleep(0.2)  # the child is importing torch
    started = time.monotonic()
    agent.close()
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started < 5
    assert failed and "stopped" in str(failed[0])
    assert agent._proc.wait(timeout=10) is not None


def test_the_server_answers_bad_requests_and_goes_on():
    requests = io.StringIO(
        "\n".join(
            [
                "not json",
                json.dumps([1, 2]),
                json.dumps({"op": "act", "history": []}),
                json.dumps(
                    {"op": "load", "choice": "strong", "task": "maze-fo"}
                ),  # scripted: needs the task itself
                json.dumps({"op": "reset", "seed": 1}),
                json.dumps({"op": "nonsense"}),
                json.dumps({"op": "close"}),
                json.dumps({"op": "reset", "seed": 2}),  # after close: not read
            ]
        )
        + "\n"
    )
    out = io.StringIO()
    serve(requests, out)
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r.get("type") for r in replies] == [
        "JSONDecodeError",
        "ValueError",
        "RuntimeError",
        "ValueError",
        "RuntimeError",
        "RuntimeError",
        None,
    ]
    assert (
        "not a model" in replies[3]["error"]
        and "before the agent was loaded" in replies[4]["error"]
    )


@pytest.mark.slow  # a model process from a folder with its own packages (~6 s)
def test_a_module_in_the_working_folder_does_not_shadow_the_agents_own(ilql, tmp_path, monkeypatch):
    # a researcher's folder holding its own json.py (or chess.py, random.py): `python -m` would
    # import it first and the agent's process would die on its first line
    (tmp_path / "json.py").write_text("raise SystemExit('the working folder shadowed json')\n")
    for package in ("training", "data", "envs"):  # names ML projects use for their own code
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(
            f"raise SystemExit('the working folder shadowed {package}')\n"
        )
    monkeypatch.chdir(tmp_path)
    agent = ProcessAgent(str(ilql), "maze-fo").load()
    try:
        task = envs.make("maze-fo")
        task.reset(0)
        agent.reset(task, 0)
        assert agent.act(task.history()) in task.legal_actions()
    finally:
        agent.close()
