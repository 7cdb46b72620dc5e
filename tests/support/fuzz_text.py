"""Hypothesis strategies for the fuzzing tests: the odd text people, terminals and endpoints send,
and the settings every fuzzing test uses (few derandomized examples; many with LMRL_HEAVY=1)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

HEAVY = os.environ.get("LMRL_HEAVY") == "1"


def fuzz(default: int, heavy: int) -> settings:
    """``default`` examples (a fixed selection: derandomized), ``heavy`` with LMRL_HEAVY=1."""
    return settings(
        max_examples=heavy if HEAVY else default,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.function_scoped_fixture,
        ],
    )


ANY_CHAR = st.characters(codec=None, categories=None)
"""Every code point, lone surrogates included."""


def odd_text(huge: int = 100_000) -> st.SearchStrategy[str]:
    """Empty, whitespace, control characters and surrogates, any unicode, two lines, ``huge`` chars."""
    return st.one_of(
        st.just(""),
        st.text(st.sampled_from(" \t\r\n\x0b\x0c\u00a0\u2028\u3000"), max_size=20),
        st.text(st.characters(categories=["Cc", "Cs", "Co", "Cn", "Zl", "Zp"]), max_size=30),
        st.text(ANY_CHAR, max_size=60),
        st.builds(
            lambda a, b: a + "\n" + b,
            st.text(ANY_CHAR, max_size=20),
            st.text(ANY_CHAR, max_size=20),
        ),
        st.builds(lambda c: (c * huge)[:huge], st.text(ANY_CHAR, min_size=1, max_size=3)),
    )
