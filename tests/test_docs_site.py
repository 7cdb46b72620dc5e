"""The documentation site builds offline with no warning (`mkdocs build --strict`, as .ci/run
does), and its hook puts the pages outside docs/ into the site with their links rewritten.
Skipped where mkdocs is not installed (the docs extra; the dev extra includes it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow  # about 5 s: the whole site
def test_the_site_builds_strictly_and_holds_the_pages_outside_docs(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (site / "index.html").is_file() and (site / "images" / "home.svg").is_file()
    for page in (
        "training",
        "research",
        "notes",
        "notes/table2-cpu-runs",
        "results",
        "results/maze-fo/results",
        "CONTRIBUTING",
        "CHANGELOG",
    ):
        assert (site / page / "index.html").is_file(), page
    reproducing = (site / "reproducing" / "index.html").read_text(encoding="utf-8")
    assert 'href="../results/maze-fo/results/"' in reproducing  # was ../results/…/results.md
    assert "fonts.googleapis.com" not in (site / "index.html").read_text(encoding="utf-8")


def test_the_hook_rewrites_a_link_out_of_docs_to_its_place_in_the_site(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from mkdocs_hooks import rewrite_links
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    from mkdocs.structure.files import File, Files

    known = ["reproducing.md", "results/maze-fo/results.md", "results/README.md"]
    files = Files(
        [
            File(uri, src_dir=str(tmp_path), dest_dir=str(tmp_path), use_directory_urls=True)
            for uri in known
        ]
    )
    (tmp_path / "results" / "maze-fo").mkdir(parents=True)
    markdown = "[a](../results/maze-fo/results.md#x) [b](../results/) [c](algorithms.md) [d](https://x.org/a.md)"
    out = rewrite_links(markdown, "docs/reproducing.md", "reproducing.md", files, tmp_path)
    assert (
        out
        == "[a](results/maze-fo/results.md#x) [b](results/README.md) [c](algorithms.md) [d](https://x.org/a.md)"
    )
