"""The agent factory in envs.core.agents: scripted policies by name, models and checkpoints
through a registry of loaders by kind whose torch-backed entries are imported only when chosen."""

from __future__ import annotations

import pytest
from test_import_hygiene import HEAVY, modules_after

from envs.core import agents
from envs.core.agents import AgentChoiceError, agent_loader, make_agent, register_agent_loader


@pytest.fixture
def loaders():
    saved = dict(agents._LOADERS)
    yield
    agents._LOADERS.clear()
    agents._LOADERS.update(saved)


def test_importing_envs_and_the_factory_imports_no_training():
    mods = modules_after(
        "import envs, data\nfrom envs.core.agents import make_agent\n"
        "make_agent('maze-fo', 'behaviour')\nmake_agent('maze-fo', 'human')"
    )
    assert not {m.split(".")[0] for m in mods} & {"training", "textual", "lmrl_tui", *HEAVY}


def test_scripted_policies_and_a_human():
    assert make_agent("maze-fo", "human") is None
    assert make_agent("maze-fo", "optimal").kind != "human"  # an alias of strong


def test_an_unknown_choice_is_the_same_one_line_error():
    with pytest.raises(AgentChoiceError) as e:
        make_agent("maze-fo", "no-such-policy")
    assert str(e.value) == (
        "unknown policy 'no-such-policy' for maze-fo: use one of strong, behaviour, random, a "
        "checkpoint folder, hf:MODEL, http:MODEL@BASE_URL or guided:LLM+CHECKPOINT"
    )
    with pytest.raises(AgentChoiceError, match="no agent loader for 'nope'"):
        agent_loader("nope")


def test_a_missing_checkpoint_folder_says_so(tmp_path):
    gone = tmp_path / "runs" / "gone-s2"
    with pytest.raises(AgentChoiceError) as e:
        make_agent("textnav-po", str(gone))
    assert str(e.value).startswith(f"no checkpoint folder at {str(gone)!r} (looked for {gone.resolve()}): ")
    assert "behaviour" in str(e.value)  # and what else can be chosen
    with pytest.raises(AgentChoiceError, match=r"^no checkpoint folder at 'runs/gone-s2'"):
        make_agent("maze-fo", "runs/gone-s2")


def test_a_checkpoint_folder_goes_to_the_registered_loader(tmp_path, loaders):
    calls = []

    def fake(path, task):
        calls.append((path, task))
        return "agent"

    register_agent_loader("checkpoint", fake)
    assert make_agent("maze-fo", str(tmp_path)) == "agent"
    assert calls == [(str(tmp_path), "maze-fo")]


def test_a_loader_named_by_a_string_is_imported_on_first_use(tmp_path, loaders):
    register_agent_loader("checkpoint", "json:dumps")  # any importable callable
    assert agent_loader("checkpoint") is __import__("json").dumps
    register_agent_loader("checkpoint", "no_such_module_for_lmrl:load")
    with pytest.raises(AgentChoiceError) as e:
        make_agent("maze-fo", str(tmp_path))
    assert str(e.value).startswith(
        "loading a checkpoint needs the training extra: pip install 'lmrl-tui[train]' (No module named"
    )
    register_agent_loader("hf", "no_such_module_for_lmrl:HFAgent")
    with pytest.raises(AgentChoiceError, match=r"^a Hugging Face model needs the training extra: pip"):
        make_agent("maze-fo", "hf:./model")


def test_the_default_entries_load_the_training_modules(loaders):
    pytest.importorskip("torch")
    from training.agent import load_agent
    from training.hf_agent import HFAgent

    assert agent_loader("checkpoint") is load_agent and agent_loader("hf") is HFAgent
