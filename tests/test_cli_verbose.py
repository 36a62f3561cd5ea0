"""``-v``/``--verbose`` is taken before a command's name and after it, by every command:
``deploybot run-once -v`` as ``deploybot -v run-once`` (a traceback with the error line,
the changed paths and timings with a publish)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli.commands import main
from tests.smallsite import SmallSite


def _commands(tmp_path: Path, config: str) -> dict[str, list[str]]:
    """Each command, with a config file that does not exist (exit 78)."""
    (tmp_path / "folder").mkdir(exist_ok=True)
    return {
        "run-once": ["run-once", "--config", config],
        "serve": ["serve", "--config", config],
        "worker": ["worker", "--config", config],
        "fleet status": ["fleet", "status", "--config", config],
        "build": ["build", str(tmp_path / "folder"), str(tmp_path / "out"), "--config", config],
        "outbox": ["outbox", "--config", config],
        "notify": ["notify", "--commit", "HEAD", "--config", config],
        "log": ["log", "--config", config],
    }


@pytest.mark.parametrize("flag", ["-v", "--verbose"])
@pytest.mark.parametrize(
    "command",
    ["run-once", "serve", "worker", "fleet status", "build", "outbox", "notify", "log"],
)
def test_the_flag_after_the_command_is_the_flag_before_it(
    tmp_path: Path, command: str, flag: str
) -> None:
    missing = str(tmp_path / "missing.toml")
    argv = _commands(tmp_path, missing)[command]
    quiet = CliRunner().invoke(main, argv)
    before = CliRunner().invoke(main, [flag, *argv])
    after = CliRunner().invoke(main, [*argv, flag])
    assert quiet.exit_code == before.exit_code == after.exit_code == 78, after.output
    error = f"deploybot: error: {missing}: config file not found"
    assert quiet.output.strip() == error
    for verbose in (before, after):
        assert verbose.output.startswith("Traceback (most recent call last):"), verbose.output
        assert verbose.output.strip().endswith(error)


def test_fleet_takes_it_between_its_name_and_its_command(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.toml")
    result = CliRunner().invoke(main, ["fleet", "-v", "status", "--config", missing])
    assert result.exit_code == 78 and result.output.startswith("Traceback"), result.output


def test_run_once_v_shows_the_detail(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    result = CliRunner().invoke(main, ["run-once", "--config", str(site.config), "-v"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "INFO deploybot.pipeline: source main at " in result.output  # the log's detail
    published = next(i for i, line in enumerate(lines) if line.startswith("published "))
    assert lines[published + 1].startswith("  ")  # the changed paths, one a line
    assert lines[-1].startswith("timings: ")
