"""What the CLI prints: one short paragraph per run, in plain text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from deploybot.config import Config
from deploybot.pipeline import PUBLISHED, UP_TO_DATE, RunResult, format_warning


def print_run(result: RunResult, config: Config, *, verbose: bool = False) -> None:
    """Print what :func:`deploybot.pipeline.run_once` did (stdout; failures on stderr)."""
    branch = config.publish.branch
    source = (result.source_commit or "")[:12]
    if result.status == UP_TO_DATE:
        click.echo(f"up to date: {branch} was built from source {source}")
    elif result.status == PUBLISHED:
        build = (result.build_commit or "")[:12]
        n = len(result.changed_paths)
        click.echo(
            f"published {build} to {branch} from source {source}: "
            f"{n} file{'s' if n != 1 else ''} changed in {result.elapsed:.2f} s"
        )
        if verbose:
            for path in result.changed_paths:
                click.echo(f"  {path}")
    else:
        click.echo(f"nothing to publish: source {source} builds the same tree as {branch}")
    for warning in result.warnings:
        click.echo(format_warning(warning), err=True)
    for key in result.mail_sent:
        click.echo(f"email sent for {key[:12]} via {config.notify.transport}")
    for key, reason in result.mail_failures:
        click.echo(f"email for {key[:12]} not delivered (kept in the outbox): {reason}", err=True)
    if verbose and result.timings:
        parts = ", ".join(f"{k} {v:.3f} s" for k, v in result.timings.items())
        click.echo(f"timings: {parts}; total {result.elapsed:.3f} s")


def print_build(build: Any, out: Path) -> None:
    """Print the result of ``deploybot build``: file count, output folder, warnings."""
    for warning in build.warnings:
        click.echo(format_warning(warning), err=True)
    n = len(build.files)
    click.echo(f"built {n} file{'s' if n != 1 else ''} into {out}")


def print_outbox(pending: Sequence[Any]) -> None:
    """Print what waits in the outbox: a count, then per message (see ``PendingEmail.__str__``)
    its key, kind, state, attempts, subject, last error and next attempt."""
    if not pending:
        click.echo("outbox is empty")
        return
    n = len(pending)
    click.echo(f"{n} message{'s' if n != 1 else ''} waiting in the outbox:")
    for item in pending:
        click.echo(str(item))


def print_delivery(report: Any) -> None:
    """Print what an outbox delivery did: one line per message sent or failed."""
    for key in report.sent:
        click.echo(f"sent {key}")
    for key, reason in report.failed:
        click.echo(f"not delivered {key}: {reason}", err=True)
