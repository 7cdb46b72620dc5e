"""Docs that cannot rot: every relative link in the README, the docs (notes included), the results and
the READMEs of training/, bench/ and experiments/ leads to a file that exists (and to a heading that
exists, where it names one); every results folder has its row in results/README.md; the README
stays short. The site itself is built by `mkdocs build --strict`
(.ci/run); the README's quickstart is run by tests/test_readme_quickstart.py."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "CHANGELOG.md",
        ROOT / "training" / "README.md",
        *(ROOT / "docs").glob("**/*.md"),
        ROOT / "bench" / "README.md",
        ROOT / "experiments" / "README.md",
        *(ROOT / "results").glob("**/*.md"),
    ]
)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks (a link in a code sample is not a link)."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """A heading's anchor as a code host and the site (pymdownx.slugs, mkdocs.yml) make it:
    markup and punctuation dropped, lower case, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = unicodedata.normalize("NFKD", text.replace("`", "").replace("*", "")).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in prose_lines(page.read_text(encoding="utf-8")):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}_{n}")  # pymdownx's suffix for a repeated heading
        found.add(f"{base}-{n}")  # a code host's
    return found


def relative_links(page: Path) -> list[str]:
    links = []
    for line in prose_lines(page.read_text(encoding="utf-8")):
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if "://" not in target and not target.startswith("mailto:"):
                links.append(target)
    return links


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in relative_links(page):
        path, _, fragment = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target} (no such file)")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{target} (no heading #{fragment})")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page) == []


def test_the_pages_do_link() -> None:
    """The link test reads links at all (a regex that matched nothing would pass every page)."""
    assert len(relative_links(ROOT / "README.md")) >= 20
    assert sum(len(relative_links(page)) for page in PAGES) >= 100


def test_a_broken_link_or_anchor_is_caught(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text(
        "# Other\n\n## The app's keys\n\n```\n# not a heading\n```\n"
    )
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#the-apps-keys) [gone](missing.md) [bad](other.md#not-a-heading)\n"
        "`[in code](missing.md)` [self](#here)\n\n## Here\n"
    )
    assert broken_links(page) == [
        "missing.md (no such file)",
        "other.md#not-a-heading (no heading #not-a-heading)",
    ]


def test_slugs_match_the_sites() -> None:
    assert slug("`lmrl play` and `lmrl serve --task`") == "lmrl-play-and-lmrl-serve---task"
    assert slug("The app's keys") == "the-apps-keys"
    assert slug("1.1 Setup") == "11-setup"


def test_every_results_folder_has_a_row_in_the_index() -> None:
    index = (ROOT / "results" / "README.md").read_text(encoding="utf-8")
    rows = {
        target.split("/")[0]
        for line in index.splitlines()
        if line.startswith("| [")
        for target in LINK.findall(line)[:1]
    }
    folders = {p.name for p in (ROOT / "results").iterdir() if p.is_dir()}
    assert folders - rows == set(), "results/README.md needs a row for each"
    assert rows - folders == set(), "rows of results/README.md without their folder"


def test_the_readme_reads_in_five_minutes() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
    assert any(line.startswith("![") and "docs/images/home.svg" in line for line in lines[:12])
