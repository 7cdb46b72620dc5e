"""mkdocs hooks: the site shows the repository's pages that live outside docs/.

The pages under docs/ link to files elsewhere in the repository (`../results/maze-fo/results.md`,
`../CONTRIBUTING.md`, `training/README.md`), so that the links work on a code host too. mkdocs
only knows docs/, so these hooks add every such page to the site under its repository path
(`results/maze-fo/results.md`, `CONTRIBUTING.md`), with the plain files they link to, and rewrite each page's relative links to
where their targets sit in the site. A link to a folder goes to its README.md (or results.md).
Nothing here fetches anything: the build stays offline.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

# The repository's pages outside docs/ that the site shows (globs from the repository root).
MIRRORED = ["CONTRIBUTING.md", "CHANGELOG.md", "training/README.md", "results/**/*.md"]

# A markdown link or image target: ](target) or ](target "title").
LINK = re.compile(r"(\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")
FOLDER_PAGES = ("README.md", "index.md", "results.md")


def _root(config: Any) -> Path:
    return Path(config["config_file_path"]).resolve().parent


def _repo_path(file: File, root: Path) -> str:
    """Where a site file lives in the repository, as a posix path from the root."""
    return Path(file.abs_src_path or "").resolve().relative_to(root).as_posix()


def on_files(files: Files, config: Any) -> Files:
    root = _root(config)
    for pattern in MIRRORED:
        for path in sorted(root.glob(pattern)):
            src_uri = path.relative_to(root).as_posix()
            if files.get_file_from_path(src_uri) is None:
                files.append(File.generated(config, src_uri, abs_src_path=str(path)))
    for page in [f for f in files if f.src_uri.endswith(".md")]:
        _mirror_linked_files(page, files, config, root)
    return files


def _mirror_linked_files(page: File, files: Files, config: Any, root: Path) -> None:
    """Add the plain files (a results.json, seeds.json) a page links to outside docs/."""
    page_repo_path = _repo_path(page, root)
    for match in LINK.finditer(Path(page.abs_src_path or "").read_text(encoding="utf-8")):
        path = match.group(2).partition("#")[0]
        if not path or "://" in path or path.startswith(("mailto:", "/")):
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page_repo_path), path))
        if target.startswith(("../", "docs/")) or not (root / target).is_file():
            continue
        if files.get_file_from_path(target) is None:
            files.append(File.generated(config, target, abs_src_path=str(root / target)))


def site_target(repo_target: str, files: Files, root: Path) -> str | None:
    """The site path of a repository path, or None where the site does not hold it."""
    candidates = [repo_target]
    if (root / repo_target).is_dir():
        candidates = [posixpath.join(repo_target, name) for name in FOLDER_PAGES]
    for candidate in candidates:
        site = candidate[len("docs/") :] if candidate.startswith("docs/") else candidate
        if files.get_file_from_path(site) is not None:
            return site
    return None


def rewrite_links(
    markdown: str, page_repo_path: str, page_src_uri: str, files: Files, root: Path
) -> str:
    def rewrite(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith(("#", "mailto:", "/")):
            return match.group(0)
        path, _, fragment = target.partition("#")
        repo_target = posixpath.normpath(posixpath.join(posixpath.dirname(page_repo_path), path))
        site = site_target(repo_target, files, root)
        if site is None:
            return match.group(0)  # mkdocs reports it (a failure under --strict)
        new = posixpath.relpath(site, posixpath.dirname(page_src_uri) or ".")
        return match.group(1) + new + ("#" + fragment if fragment else "") + match.group(3)

    return LINK.sub(rewrite, markdown)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    root = _root(config)
    return rewrite_links(markdown, _repo_path(page.file, root), page.file.src_uri, files, root)
