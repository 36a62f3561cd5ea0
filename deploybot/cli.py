"""The ``deploybot`` command line: click commands only.

Each command parses its options, calls one function, and maps
:class:`~deploybot.errors.DeploybotError` subclasses to sysexits-style exit codes
(0 done or nothing to do, 1 bad input in the source, 75 try again later, 78 bad config),
printing one clear line; ``-v`` adds detail and the traceback.
"""

from __future__ import annotations

import functools
import logging
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from deploybot import __version__
from deploybot.config import Config, default_config_path, load_config
from deploybot.errors import EX_TEMPFAIL, DeploybotError

F = TypeVar("F", bound=Callable[..., Any])

_config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Config file (default: $DEPLOYBOT_CONFIG, else ./deploybot.toml).",
)


def _handle_errors(func: F) -> F:
    """Turn a DeploybotError into its exit code and one line on stderr."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except DeploybotError as exc:
            if _verbose():
                traceback.print_exc()
            click.echo(f"deploybot: error: {exc}", err=True)
            sys.exit(exc.exit_code)

    return wrapper  # type: ignore[return-value]


def _verbose() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().obj and ctx.find_root().obj.get("verbose"))


def _load(config_path: Path | None) -> Config:
    return load_config(config_path or default_config_path())


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help="Show detail, timings and tracebacks.")
@click.version_option(__version__, prog_name="deploybot")
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """Publish a Jekyll-style site from git: source push -> build commit -> commit email."""
    ctx.obj = {"verbose": verbose}
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(message)s" if not verbose else "%(levelname)s %(name)s: %(message)s",
    )


@main.command("run-once")
@_config_option
@click.option("--full", is_flag=True, help="Build even if the source has not moved.")
@_handle_errors
def run_once_cmd(config_path: Path | None, full: bool) -> None:
    """Fetch the source, build, publish one build commit and email it.

    Exit status: 0 published or nothing to do; 1 bad input in the source; 75 try again
    later (network, lock held, push rejected, mail not delivered); 78 bad config.
    """
    from deploybot import pipeline, report

    config = _load(config_path)
    result = pipeline.run_once(config, full=full)
    report.print_run(result, config, verbose=_verbose())
    if result.mail_failures:
        sys.exit(EX_TEMPFAIL)


@main.command("build")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option("--rev", default=None, help="Build this git revision (default HEAD for a repo).")
@_config_option
@_handle_errors
def build_cmd(source: Path, out: Path, rev: str | None, config_path: Path | None) -> None:
    """Render SOURCE (a folder or a git repository) into the folder OUT; no git writes.

    A bare repository, or any repository with --rev, is read from git objects at that
    revision; a plain folder (or a work tree without --rev) is read as it is on disk, so
    uncommitted edits can be previewed. Only the [render] keys of --config are used.
    """
    from deploybot import preview, report

    render_config = load_config(config_path).render if config_path else None
    build = preview.build_to_folder(source, out, rev=rev, render_config=render_config)
    report.print_build(build, out)


@main.command("outbox")
@_config_option
@_handle_errors
def outbox_cmd(config_path: Path | None) -> None:
    """List the emails waiting in the outbox, with their attempts and last error."""
    from deploybot import notify, pipeline, report

    config = _load(config_path)
    pending = notify.list_pending(pipeline.state_paths(config)["outbox"])
    report.print_outbox(pending)


if __name__ == "__main__":  # pragma: no cover
    main()
