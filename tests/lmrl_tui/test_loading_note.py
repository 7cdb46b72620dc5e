"""What the new-episode dialog says at once while the chosen sides load."""

from __future__ import annotations

import pytest

from lmrl_tui.starting import EpisodeChoice, loading_note, needs_loading


@pytest.mark.parametrize(
    "agent,note",
    [
        ("runs/ilql", "Loading checkpoint …"),
        ("hf:smollm2-135m", "Loading the model …"),
        ("http:llama@http://127.0.0.1:8000/v1", "Loading the model …"),
        ("guided:hf:smollm2-135m+runs/goals", "Loading the model …"),
    ],
)
def test_the_note_names_what_loads(agent, note):
    choice = EpisodeChoice("twenty-questions", 1, agent, "embedded", "ann", False)
    assert needs_loading(choice) and loading_note(choice) == f"{note} (escape: cancel)"
    assert not needs_loading(
        EpisodeChoice("twenty-questions", 1, "strong", "embedded", "ann", False)
    )
