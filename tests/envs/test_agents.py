"""The agent factory in envs.players.agents: scripted policies by name, models and checkpoints
through a registry of loaders by kind whose torch-backed entries are imported only when chosen."""

from __future__ import annotations

import pytest
from test_import_hygiene import HEAVY, modules_after

from envs.players import agents
from envs.players.agents import AgentChoiceError, agent_loader, make_agent, register_agent_loader


@pytest.fixture
def loaders():
    saved = dict(agents._LOADERS)
    yield
    agents._LOADERS.clear()
    agents._LOADERS.update(saved)


def test_importing_envs_and_the_factory_imports_no_training():
    mods = modules_after(
        "import envs, data\nfrom envs.players.agents import make_agent\n"
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
    assert str(e.value).startswith(
        f"no checkpoint folder at {str(gone)!r} (looked for {gone.resolve()}): "
    )
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
    # this checkout is a clone: the hint is the editable install, which works here
    assert str(e.value).startswith(
        "loading a checkpoint needs the training extra: pip install -e '.[train]' (in the clone's folder) "
        "(No module named"
    )
    register_agent_loader("hf", "no_such_module_for_lmrl:HFAgent")
    with pytest.raises(
        AgentChoiceError, match=r"^a Hugging Face model needs the training extra: pip"
    ):
        make_agent("maze-fo", "hf:./model")


def test_the_default_entries_load_the_training_modules(loaders):
    pytest.importorskip("torch")
    from training.agents.checkpoint_agent import load_agent
    from training.agents.hf_agent import HFAgent

    assert agent_loader("checkpoint") is load_agent and agent_loader("hf") is HFAgent


def test_a_checkpoint_folder_with_decoding_settings_passes_them_to_the_loader(tmp_path, loaders):
    """``FOLDER --decoding rerank --no-repeat``: lmrl eval's flags, written after the folder."""
    calls = []

    def fake(path, task, **settings):
        calls.append((path, task, settings))
        return "agent"

    register_agent_loader("checkpoint", fake)
    folder = tmp_path / "my run"  # a space in the folder's name is kept
    folder.mkdir()
    choice = f"{folder} --decoding rerank --no-repeat --logit-weight=0.1 --top-k 5"
    assert agents.model_kind("twenty-questions", choice) == "checkpoint"
    assert make_agent("twenty-questions", choice) == "agent"
    assert calls == [
        (
            str(folder),
            "twenty-questions",
            {"decoding": "rerank", "no_repeat": True, "logit_weight": 0.1, "top_k": 5},
        )
    ]
    assert make_agent("maze-fo", f"{folder} --repeat --temperature 0.5") == "agent"
    assert calls[-1][2] == {"no_repeat": False, "temperature": 0.5}


@pytest.mark.parametrize(
    "settings, message",
    [
        (
            "--decoding best",
            "--decoding is one of sample, greedy, rerank, rerank_sample, not 'best'",
        ),
        ("--beam 4", "unknown checkpoint setting '--beam': after the folder, use --decoding"),
        ("--beta", "--beta needs a value"),
        ("--top-k --no-repeat", "--top-k needs a value"),
        ("--top-k 2.5", "--top-k takes a whole number, not '2.5'"),
        ("--temperature 0", "--temperature must be above 0, not 0"),
        ("--beta nan", "--beta takes a finite number, not 'nan'"),
        ("--decoding 'rerank", "cannot read the settings after"),
    ],
)
def test_bad_checkpoint_settings_are_one_line_errors_that_load_nothing(
    tmp_path, loaders, settings, message
):
    register_agent_loader("checkpoint", lambda *a, **k: pytest.fail("loaded despite bad settings"))
    with pytest.raises(AgentChoiceError) as e:
        make_agent("maze-fo", f"{tmp_path} {settings}")
    assert message in str(e.value) and "\n" not in str(e.value)


def test_settings_after_a_missing_folder_say_the_folder_is_missing(tmp_path):
    with pytest.raises(
        AgentChoiceError, match=r"^no checkpoint folder at 'runs/gone' .*apply to a checkpoint only"
    ):
        make_agent("maze-fo", "runs/gone --decoding rerank")
    assert agents.model_kind("maze-fo", "runs/gone --decoding rerank") is None


def test_settings_text_writes_the_flags_back():
    from envs.players.checkpoint_choice import settings_text, split_checkpoint_choice

    folder, settings = split_checkpoint_choice("runs/mc --no-repeat --beta 4 --decoding=rerank")
    assert (
        folder == "runs/mc"
        and settings_text(settings) == "--decoding rerank --beta 4.0 --no-repeat"
    )
    assert split_checkpoint_choice(f"runs/mc {settings_text(settings)}") == (folder, settings)
