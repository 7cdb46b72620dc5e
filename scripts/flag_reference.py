"""Write ``docs/flags.md``: every flag of every ``lmrl`` command, from the parsers themselves.

``python scripts/flag_reference.py`` rewrites the page; ``--check`` exits 1 if it is out of date
(a test runs the check, so a new or changed flag cannot miss its line in the docs).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "flags.md"

HEAD = """# Every flag

Every flag of every `lmrl` command, as `lmrl COMMAND --help` gives it (this page is written from
the parsers by `scripts/flag_reference.py`; a test checks it is current). Examples of each command:
[Using lmrl-tui](using.md#commands); what the training flags do to a run: [Training](../training/README.md).
"""


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices:
        return " / ".join(f"`{c}`" for c in action.choices)
    return f"`{action.metavar or action.dest.upper()}`"


def _default(action: argparse.Action) -> str:
    d = action.default
    if action.nargs == 0 or d is None or d is argparse.SUPPRESS or d == []:
        return ""
    return f"`{d}`"


def _rows(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.Action]]:
    out = []
    for a in parser._actions:
        if not a.option_strings or a.help == argparse.SUPPRESS or "-h" in a.option_strings:
            continue
        out.append((", ".join(f"`{o}`" for o in a.option_strings), a))
    return out


def _table(rows: list[tuple[str, argparse.Action, str]], extra: str | None = None) -> list[str]:
    head = "| flag | value | default | " + (f"{extra} | " if extra else "") + "what it does |"
    lines = [head, "|" + "---|" * (5 if extra else 4)]
    for flag, a, more in rows:
        cells = [flag, _value(a), _default(a)] + ([more] if extra else []) + [_cell(a.help or "")]
        lines.append(
            "| " + " | ".join(_cell(c) if i < 2 else c for i, c in enumerate(cells)) + " |"
        )
    return lines


def render() -> str:
    from lmrl_tui.cli.parser import build_parser

    out = [HEAD]
    for name, sub in _subparsers(build_parser()).items():
        out += [f"## lmrl {name}", ""]
        if sub.description:
            out += [_cell(sub.description), ""]
        algos = _subparsers(sub)
        if not algos:
            rows = [(f, a, "") for f, a in _rows(sub)]
            out += (_table(rows) if rows else ["No flags beyond `--help`."]) + [""]
            continue
        names: dict[int, list[str]] = {}  # one parser per algorithm, several names (aliases)
        for alias, p in algos.items():
            names.setdefault(id(p), []).append(alias)
        first = {id(p): names[id(p)][0] for p in algos.values()}
        seen: dict[str, tuple[argparse.Action, list[str]]] = {}
        for p in {id(p): p for p in algos.values()}.values():
            for flag, a in _rows(p):
                seen.setdefault(flag, (a, []))[1].append(first[id(p)])
        every = len(names)
        rows = [
            (flag, a, "all" if len(used) == every else ", ".join(f"`{u}`" for u in used))
            for flag, (a, used) in sorted(seen.items(), key=lambda kv: kv[0].lstrip("`-").lower())
        ]
        out += [
            "Algorithms (and their other names): "
            + "; ".join(", ".join(f"`{n}`" for n in ns) for ns in names.values())
            + ".",
            "",
        ]
        out += _table(rows, extra="algorithms") + [""]
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv[1:]:
        if not PAGE.exists() or PAGE.read_text() != text:
            print(f"{PAGE.name} is out of date: run python scripts/flag_reference.py")
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
