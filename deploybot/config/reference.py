"""Write ``config/deploybot.example.toml`` and ``docs/config-reference.md`` from the schema.

Both list every key of :mod:`deploybot.config.schema`, by table, with its default and help
(the reference page adds its type and its range or choices), so neither is edited by hand:
``make config-reference`` (``python -m deploybot.config.reference``) writes them again, and
``tests/test_config_reference.py`` fails while either differs from what this writes.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deploybot.config.options import Declared, declared
from deploybot.config.schema import Config

EXAMPLE = Path("config/deploybot.example.toml")
REFERENCE = Path("docs/config-reference.md")
MAKE_TARGET = "make config-reference"
_WIDTH = 99

_EXAMPLE_HEAD = f"""\
deploybot configuration: every key, by table, with its default and what it does. Written
from deploybot/config/schema.py by `{MAKE_TARGET}`: do not edit it by hand. Every
uncommented value is the key's default, but source.url, the one REQUIRED key (it has none:
put your site's repository there); a commented line is a key unset by default, with an
example. Copied as it is, this file builds ../site into its own asf-site branch and sends no
email. Paths are relative to this file. Load it with `deploybot run-once --config FILE`
(default: $DEPLOYBOT_CONFIG, else ./deploybot.toml). Types, ranges and choices:
docs/config-reference.md."""

_REFERENCE_HEAD = f"""\
# `deploybot.toml` reference

Written from `deploybot/config/schema.py` by `{MAKE_TARGET}`: do not edit it by hand.

Every key of `deploybot.toml`, by table, with its type, its default and the values it
takes. `source.url` is the one key without a default. Paths are relative to the config
file; secrets are never in it (a `*_env` key names the environment variable holding one).
Every value is checked when the config is loaded, and every error of a file is reported
at once, one line each naming the key and the file (exit 78).
`config/deploybot.example.toml` holds the same keys as a file to copy.
"""

_TYPE_NAMES = {str: "string", int: "integer", float: "number", bool: "boolean", Path: "path"}


def example_toml(root: type = Config) -> str:
    """The example config of the schema ``root``: each table's help as comments, then its
    keys, each with its help as comments above ``key = default`` (or, for a key with an
    example, ``# key = example``); nested tables after their parent's keys."""
    lines = [*_comment(_EXAMPLE_HEAD, "")]
    for item in declared(root):
        assert item.record is not None, f"{item.dotted}: the top level holds tables only"
        lines += _example_table(item)
    return "\n".join(lines) + "\n"


def _example_table(table: Declared) -> list[str]:
    assert table.record is not None
    lines = ["", *_comment(table.help, ""), f"[{table.dotted}]"]
    tables = []
    for item in declared(table.record, table.dotted + "."):
        if item.record is not None:
            tables.append(item)
            continue
        assert item.option is not None
        lines += _comment(item.help, "")
        example = item.option.example
        if item.required:
            lines.append(f"{item.toml} = {_toml(example)}")
        elif example is not None:
            lines.append(f"# {item.toml} = {_toml(example)}")
        else:
            assert item.default is not None, f"{item.dotted}: unset by default, so needs an example"
            lines.append(f"{item.toml} = {_toml(item.default)}")
    for item in tables:
        lines += _example_table(item)
    return lines


def _comment(text: str, indent: str) -> list[str]:
    """``text`` as TOML comment lines of at most :data:`_WIDTH` characters (paragraphs
    kept: a line break in ``text`` starts a new comment line)."""
    out = []
    for paragraph in text.split("\n"):
        wrapped = textwrap.wrap(paragraph, _WIDTH - len(indent) - 2, break_on_hyphens=False)
        out += [f"{indent}# {line}" for line in wrapped or [""]]
    return out


def _toml(value: Any) -> str:
    """``value`` as TOML writes it (strings as basic strings: JSON's escapes are TOML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:_}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str | Path):
        return json.dumps(str(value), ensure_ascii=False)
    raise TypeError(f"no TOML form for {value!r}")


def reference_markdown(root: type = Config) -> str:
    """The reference page of the schema ``root``: a section per table (nested ones after
    their parent), its help, and a table of its keys: type, default, allowed values, help."""
    parts = [_REFERENCE_HEAD]
    todo = list(declared(root))
    while todo:
        table = todo.pop(0)
        assert table.record is not None
        items = declared(table.record, table.dotted + ".")
        rows = [
            "| Key | Type | Default | Allowed | What it does |",
            "|---|---|---|---|---|",
        ]
        for item in items:
            if item.record is None:
                rows.append(
                    f"| `{item.toml}` | {_type_name(item)} | {_default(item)} | "
                    f"{_allowed(item)} | {_markdown(item.help)} |"
                )
        todo[:0] = [item for item in items if item.record is not None]
        parts.append(
            f"## `[{table.dotted}]`\n\n{_markdown(table.help)}\n\n" + "\n".join(rows) + "\n"
        )
    return "\n".join(parts)


def _type_name(item: Declared) -> str:
    if typing.get_origin(item.kind) is tuple:
        return "list of strings"
    return _TYPE_NAMES[item.kind]


def _default(item: Declared) -> str:
    if item.required:
        return "**required**"
    if item.default is None:
        return "unset"
    if item.default == "":
        return 'unset (`""`)'
    return f"`{_toml(item.default)}`"


def _allowed(item: Declared) -> str:
    assert item.option is not None
    option = item.option
    if option.choices:
        return ", ".join(f"`{choice}`" for choice in option.choices)
    if option.range is not None:
        low, high = option.range
        span = f"{low:,} to {high:,}"
        return f"0 (no limit), or {span}" if option.zero_is_no_limit else span
    if option.example is not None and not item.required:
        return f"e.g. `{_toml(option.example)}`"
    return ""


def _markdown(text: str) -> str:
    """``text`` safe in a Markdown table cell: ``|`` escaped, ``<...>`` shown, not HTML."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def main(argv: Sequence[str] | None = None) -> int:
    """Write both files under ``--root`` (default: the working folder); with ``--check``,
    write nothing and return 1 when either differs from what would be written."""
    parser = argparse.ArgumentParser(prog="python -m deploybot.config.reference")
    parser.add_argument("--root", type=Path, default=Path("."))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale = []
    for name, text in ((EXAMPLE, example_toml()), (REFERENCE, reference_markdown())):
        target = args.root / name
        if target.exists() and target.read_text(encoding="utf-8") == text:
            continue
        if args.check:
            stale.append(str(name))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            print(f"wrote {name}")
    if stale:
        print(f"stale: {', '.join(stale)}; run `{MAKE_TARGET}`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
