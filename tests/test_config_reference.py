"""The schema is the one place a key is declared: the example config and the reference page
are written from it (and fail here while they differ), the loader reads what it declares, and
the no-op shortcut, which reads ``state.dir`` without the loader, reads the schema's key."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from deploybot.config import checks, reference
from deploybot.config.load import _Walk, load_config
from deploybot.config.options import every_key, key, table
from deploybot.config.schema import Config, StateConfig
from deploybot.pipeline import noop
from deploybot.support.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("name", "written"),
    [
        (reference.EXAMPLE, reference.example_toml),
        (reference.REFERENCE, reference.reference_markdown),
    ],
)
def test_the_generated_files_are_what_the_schema_writes(name: Path, written: Any) -> None:
    on_disk = (ROOT / name).read_text(encoding="utf-8")
    assert on_disk == written(), (
        f"{name} differs from what deploybot/config/schema.py writes: run "
        f"`{reference.MAKE_TARGET}` and commit the result"
    )


def test_the_example_holds_every_key_with_its_default() -> None:
    """Every key: uncommented with its default, or commented out with its example (a key
    unset by default); ``source.url`` with its example."""
    text = (ROOT / reference.EXAMPLE).read_text(encoding="utf-8")
    example = tomllib.loads(text)
    for item in every_key(Config):
        assert item.option is not None
        *tables, leaf = item.dotted.split(".")
        where: Any = example
        for name in tables:
            where = where[name]
        if item.required:
            assert where[leaf] == item.option.example, item.dotted
        elif item.option.example is not None:
            assert leaf not in where, item.dotted
            assert f"\n# {leaf} = " in text, item.dotted
        else:
            default = item.default
            if isinstance(default, Path):
                default = str(default)
            if isinstance(default, tuple):
                default = list(default)
            assert where[leaf] == default, item.dotted


def test_the_reference_page_has_a_row_for_every_key() -> None:
    page = reference.reference_markdown()
    for item in every_key(Config):
        table_name = item.dotted.rpartition(".")[0]
        section = page.split(f"## `[{table_name}]`\n", 1)[1].split("\n## ", 1)[0]
        assert f"\n| `{item.toml}` |" in section, item.dotted
    assert '| `from` | string | `"deploybot@localhost"` |' in page  # TOML name, not `sender`
    assert "| `port` | integer | `25` | 1 to 65,535 |" in page
    assert (
        '| `footnotes` | string | `"kramdown"` | `kramdown`, `kramdown1`, `mistune`, `none` |'
        in page
    )
    assert "| `max_lines` | integer | `10_000` | 0 (no limit), or 1 to 10,000,000 |" in page


def test_the_generator_checks_and_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert reference.main(["--root", str(tmp_path), "--check"]) == 1
    assert f"run `{reference.MAKE_TARGET}`" in capsys.readouterr().err
    assert reference.main(["--root", str(tmp_path)]) == 0
    assert (tmp_path / reference.EXAMPLE).read_text() == reference.example_toml()
    assert reference.main(["--root", str(tmp_path), "--check"]) == 0
    assert reference.main(["--root", str(ROOT), "--check"]) == 0


def test_every_integer_key_declares_its_range_and_every_help_is_one_line() -> None:
    for item in every_key(Config):
        assert item.option is not None
        assert (item.option.range is not None) == (item.kind is int), item.dotted
        assert item.help and "\n" not in item.help, item.dotted


def test_the_derived_fields_are_no_keys(tmp_path: Path) -> None:
    """``token_key``, ``url_key``, ``path``, ``base``, ``raw_urls``: set by the loader only."""
    keys = {item.dotted for item in every_key(Config)}
    assert not keys & {"source.token_key", "publish.url_key", "publish.token_key"}
    for text, dotted in (
        ('[source]\nurl = "s"\ntoken_key = "x"\n', "source.token_key"),
        ('raw_urls = ["a", "b"]\n[source]\nurl = "s"\n', "raw_urls"),
    ):
        path = tmp_path / "deploybot.toml"
        path.write_text(text)
        with pytest.raises(ConfigError, match=f"unknown key '{dotted}'"):
            load_config(path)


def test_the_no_op_shortcut_reads_the_schemas_state_dir(tmp_path: Path) -> None:
    """:func:`deploybot.pipeline.noop.state_folder` reads ``[state] dir`` without the loader:
    the same key, the same default, the same folder as :func:`load_config`."""
    assert "state.dir" in {item.dotted for item in every_key(Config)}
    assert noop.state_folder(b"") == str(StateConfig().dir)
    example = (ROOT / reference.EXAMPLE).read_bytes()
    assert noop.state_folder(example) == str(StateConfig().dir)
    for text in (
        '[source]\nurl = "s"\n',
        '[source]\nurl = "s"\n[state]\ndir = "elsewhere/state"\n',
        "[source]\nurl = \"s\"\n[state] # the state\ndir = 'st' # here\n",
        'state.dir = "dotted"\n[source]\nurl = "s"\n',
    ):
        path = tmp_path / "deploybot.toml"
        path.write_text(text)
        folder = (tmp_path / noop.state_folder(text.encode())).resolve()
        assert load_config(path).state.dir == folder, text


@dataclass(frozen=True)
class _Extra:
    ssh_command: str = key("ssh", help="The ssh program git runs", check=checks.check_one_line)
    retries: int = key(3, help="Fetches tried", range=(1, 10))


@dataclass(frozen=True)
class _Root:
    extra: _Extra = table(_Extra, help="A table added by one declaration per key.")


def test_a_new_key_is_one_declaration(tmp_path: Path) -> None:
    """Declared once, a key is read, checked and documented with nothing else to edit."""
    path = tmp_path / "deploybot.toml"
    walk = _Walk(path)
    read = walk.table(_Root, {"extra": {"retries": 5, "ssh_command": "ssh -4"}}, "")
    assert (read.extra.retries, read.extra.ssh_command, walk.errors) == (5, "ssh -4", [])
    walk = _Walk(path)
    walk.table(_Root, {"extra": {"retries": 11, "ssh_comand": "x", "ssh_command": "a\nb"}}, "")
    assert walk.errors == [
        f"{path}: 'extra.retries' must be 1 or more and at most 10, not 11",
        f"{path}: unknown key 'extra.ssh_comand'; did you mean 'ssh_command'?",
        f"{path}: 'extra.ssh_command' must be one line of text, not 'a\\nb'",
    ]
    assert "# Fetches tried\nretries = 3\n" in reference.example_toml(_Root)
    assert "| `retries` | integer | `3` | 1 to 10 | Fetches tried |" in (
        reference.reference_markdown(_Root)
    )
