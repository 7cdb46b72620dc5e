"""data/ owns every SQL statement: the other packages never touch a store's connection, run a
statement, or write SQL text. Their sources are scanned (AST), so it stays that way."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("envs", "training", "lmrl_tui", "bench", "experiments", "scripts")
CONNECTION_ATTRS = {"db", "_db", "conn", "_conn", "_connections", "_writing"}
STATEMENT_CALLS = {"execute", "executemany", "executescript", "atomic", "query", "rows_where"}
SQL_TEXT = re.compile(
    r"\b(SELECT\b[\s\S]*\bFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
    r"CREATE\s+(TABLE|INDEX)|BEGIN\s+IMMEDIATE|PRAGMA\s+\w+)\b"
)
OPTIONS = {"args", "gargs", "a", "ns"}
"""Names of argparse namespaces: their ``.db`` is the ``--db`` option, not a connection."""
ALLOWED = {
    # the write benchmark's raw-sqlite3 baseline, on a file of its own (not a store)
    ("bench/bench_spine.py", "raw"),
    ("bench/bench_spine.py", "sql-text"),
    ("bench/bench_spine.py", "import sqlite3"),
}


def _sources() -> list[Path]:
    return sorted(p for d in SCANNED for p in (ROOT / d).rglob("*.py"))


def violations(path: Path, text: str) -> list[str]:
    """Where ``text`` (the source of ``path``) reaches a connection or holds SQL."""
    rel = path.relative_to(ROOT).as_posix() if path.is_absolute() else path.as_posix()
    found: list[str] = []

    def flag(node: ast.AST, what: str, key: str) -> None:
        if (rel, key) not in ALLOWED:
            found.append(f"{rel}:{getattr(node, 'lineno', '?')}: {what}")

    tree = ast.parse(text)
    docstrings = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in CONNECTION_ATTRS:
            if node.attr == "db" and isinstance(node.value, ast.Name) and node.value.id in OPTIONS:
                continue
            flag(node, f"touches .{node.attr}", ast.unparse(node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = ast.unparse(node.func.value)
            name = node.func.attr
            if name in STATEMENT_CALLS and not (
                name == "query" and receiver == "self"
            ):  # Textual's DOM query
                flag(node, f"runs {receiver}.{name}(...)", receiver)
            elif name == "count" and "store" in receiver and node.args:
                flag(node, f"passes SQL to {receiver}.count(...)", receiver)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            if any(n.split(".")[0] in ("sqlite3", "sqlite_utils") for n in names):
                flag(node, "imports sqlite3/sqlite_utils", "import sqlite3")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        ):
            if SQL_TEXT.search(node.value):
                flag(node, f"holds SQL text {node.value[:40]!r}", "sql-text")
    return found


def test_no_sql_outside_data():
    found = [v for p in _sources() for v in violations(p, p.read_text(encoding="utf-8"))]
    assert not found, "SQL outside data/ (add a function to data/ instead):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "code",
    [
        "rows = store.db.execute('SELECT 1').fetchall()",
        "self.store.db.query('x')",
        "with store.db.atomic():\n    pass",
        "c = store._conn",
        "n = store.count('task = ?', ['maze-fo'])",
        "import sqlite3",
        "sql = 'SELECT id FROM episodes'",
        "sql = f'INSERT INTO runs(x) VALUES ({v})'",
    ],
)
def test_the_scan_catches(code):
    assert violations(Path("training/x.py"), code)


@pytest.mark.parametrize(
    "code",
    [
        "for b in self.query('#chat-row Button'):\n    pass",
        "n = store.count(task='maze-fo')",
        "path = tmp / 'maze.db'",
        "store = Store(args.db)",
        "def f():\n    '''Select the episodes from the store.'''",
    ],
)
def test_the_scan_lets_pass(code):
    assert not violations(Path("training/x.py"), code)
