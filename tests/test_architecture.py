"""The package structure holds: no import circle, files under 400 lines, no package that swallows the
product (README, "Architecture")."""

from __future__ import annotations

from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("envs", "data", "training", "lmrl_tui")
FAMILIES = ("maze", "textnav", "wordle", "chess", "questions", "car_dealer")


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _product_files() -> list[Path]:
    return [p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")]


def strongly_connected(adj: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the components with more than one module are import circles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(adj):
        if root in index:
            continue
        work = [(root, iter(sorted(adj[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(adj[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_the_cycle_finder_finds_a_circle() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []


def test_no_import_circle() -> None:
    """Every import counts, also those inside functions (grimp reads them all)."""
    graph = grimp.build_graph(*PACKAGES)
    mods = set(graph.modules)
    adj = {m: set(graph.find_modules_directly_imported_by(m)) & mods for m in mods}
    assert strongly_connected(adj) == []


def test_no_file_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in _product_files() if (n := _lines(p)) > 400}
    assert long == {}


def test_no_package_swallows_the_product() -> None:
    total = sum(_lines(p) for p in _product_files())
    share = {pkg: sum(_lines(p) for p in (ROOT / pkg).rglob("*.py")) / total for pkg in PACKAGES}
    for pkg, s in share.items():
        if pkg != "envs":
            assert s <= 0.35, f"{pkg} is {s:.0%} of the product code"
    for fam in FAMILIES:
        s = sum(_lines(p) for p in (ROOT / "envs" / fam).rglob("*.py")) / total
        assert s <= 0.15, f"envs/{fam} is {s:.0%} of the product code"


@pytest.mark.parametrize("family", FAMILIES)
def test_families_use_the_same_file_names(family: str) -> None:
    roles = {
        "__init__.py",
        "family.py",
        "task.py",
        "policies.py",
        "partner.py",
        "text.py",
        "data.py",
        "engine.py",
        "exact.py",
        "stockfish.py",
    }
    root = ROOT / "envs" / family
    tasks = [p.parent for p in root.rglob("task.py")]
    assert tasks, f"envs/{family} has no task.py"
    for d in tasks:
        odd = {p.name for p in d.glob("*.py")} - roles
        assert not odd, f"{d.relative_to(ROOT)} has files outside the shared roles: {sorted(odd)}"


def _module_names(package: str) -> set[str]:
    """Every importable dotted name of ``package`` (its subpackages and modules)."""
    out = set()
    for p in (ROOT / package).rglob("*.py"):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.add(".".join(parts))
    return out


def _strings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string literal of a file, docstrings and f-string parts included."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _naming(files: list[Path], names: set[str]) -> list[str]:
    import re

    pattern = re.compile(
        r"(?<![\w.])("
        + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        + r")(?![\w])"
    )
    return [
        f"{p.name}:{line}: {m.group(1)}"
        for p in files
        for line, text in _strings(p)
        for m in pattern.finditer(text)
    ]


def test_the_tasks_name_no_package_above_them_and_the_core_no_family() -> None:
    """No string of envs names a module of data, training or the app (agent kinds and the model
    process are provided by the training package), and none of envs/core names a family (they
    declare themselves in their own family.py): what import-linter cannot see, strings included."""
    above = {
        m for pkg in ("data", "training", "lmrl_tui") for m in _module_names(pkg) if "." in m
    }  # "data": a word too
    assert _naming(sorted((ROOT / "envs").rglob("*.py")), above) == []
    families = {
        m for m in _module_names("envs") if m.split(".")[1:2] and m.split(".")[1] in FAMILIES
    }
    assert _naming(sorted((ROOT / "envs" / "core").rglob("*.py")), families) == []


def test_the_string_finder_finds_a_module_named_in_a_docstring(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text(
        '"""Loads ``training.agents.server`` in a child."""\nX = f"{1} data.store"\nY = "datasets"\n'
    )
    got = [s.split(": ")[1] for s in _naming([f], {"training.agents.server", "data.store", "data"})]
    assert got == ["training.agents.server", "data.store"]
