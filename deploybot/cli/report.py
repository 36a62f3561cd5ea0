"""What the CLI prints: one short paragraph per run, in plain text.

The pipeline's and the outbox's modules are imported by the functions that print their
results, not at the top: ``deploybot build`` prints through this module too, and would
otherwise import the whole pipeline and the email code it never runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from deploybot.config.schema import Config

if TYPE_CHECKING:
    from deploybot.pipeline.preview import PreviewResult
    from deploybot.pipeline.run import RunResult
    from deploybot.render.model import RenderWarning


def print_run(
    result: RunResult, config: Config, *, verbose: bool = False, quiet: bool = False
) -> None:
    """Print what :func:`deploybot.pipeline.run.run_once` did (stdout; warnings and failures
    on stderr); ``quiet``: only the emails not delivered (the run exits 75) or refused for
    good (78)."""
    # lazy on purpose (see the module docstring); the run has imported both already
    from deploybot.notify.deliver.outbox import describe_key
    from deploybot.pipeline.run import RunStatus

    if quiet:
        _print_mail_failures(result, config)
        return
    branch = config.publish.branch
    source = (result.source_commit or "")[:12]
    if result.status == RunStatus.UP_TO_DATE:
        click.echo(f"up to date: {branch} was built from source {source}")
    elif result.status == RunStatus.PUBLISHED:
        build = (result.build_commit or "")[:12]
        n = len(result.changed_paths)
        click.echo(
            f"published {build} to {branch} from source {source}: "
            f"{n} file{'s' if n != 1 else ''} changed in {result.elapsed:.2f} s"
        )
        if verbose:
            for path in result.changed_paths:
                click.echo(f"  {path}")
    elif result.status == RunStatus.OLDER:
        published = (result.published_source or "")[:12]
        why = (
            f"source {source} is older than the published {published}"
            if result.order_known
            else f"cannot tell whether source {source} is older than the published "
            f"{published}, which is no longer in the source repository (rewound or rewritten)"
        )
        click.echo(
            f"not publishing: {why}; {branch} stays as it is (run-once --allow-older publishes it)"
        )
    elif result.unread_paths == ():
        click.echo(f"nothing to publish: source moved to {source}, but no path changed")
    elif result.unread_paths is not None:
        click.echo(
            f"nothing to publish: source moved to {source}, but only paths the build does "
            f"not read changed ({_listed(result.unread_paths)})"
        )
    else:
        click.echo(f"nothing to publish: source {source} builds the same tree as {branch}")
    for warning in result.warnings:
        click.echo(format_warning(warning), err=True)
    for key in result.mail_sent:
        click.echo(f"{describe_key(key)} sent via {_channel(key, config)}")
    _print_mail_failures(result, config)
    for preview in result.previews:
        print_preview(preview, config)
    if verbose and result.timings:
        parts = ", ".join(f"{k} {v:.3f} s" for k, v in result.timings.items())
        click.echo(f"timings: {parts}; total {result.elapsed:.3f} s")


def print_preview(preview: PreviewResult, config: Config) -> None:
    """One line for a branch preview of the run (a failure on stderr): ``preview of
    feature/x at 1a2b3c4d5e6f: published 9f8e7d6c5b4a to previews (preview/feature-x/, 12
    files changed): https://previews.example.org/preview/feature-x/``."""
    from deploybot.pipeline.preview import PreviewStatus  # lazy on purpose: module docstring

    branch = config.preview.publish_branch
    at = f" at {preview.source_commit[:12]}" if preview.source_commit else ""
    head = f"preview of {preview.branch}{at}"
    if preview.status in (PreviewStatus.FAILED, PreviewStatus.REFUSED):
        click.echo(f"{head}: {preview.status.value}: {preview.error}", err=True)
        return
    if preview.status is PreviewStatus.OLDER:
        click.echo(f"{head}: not publishing: {preview.folder}/ shows a newer commit")
        return
    n = len(preview.changed_paths)
    what = {
        PreviewStatus.PUBLISHED: f"published {(preview.commit or '')[:12]} to {branch}",
        PreviewStatus.UNCHANGED: f"unchanged on {branch}",
        PreviewStatus.REMOVED: f"the branch is gone: removed from {branch}",
    }[preview.status]
    url = f": {preview.url}" if preview.url else ""
    click.echo(f"{head}: {what} ({preview.folder}/, {n} file{'s' if n != 1 else ''} changed){url}")
    for key in preview.mail_sent:
        click.echo(f"preview email for {key[:12]} sent via {config.notify.transport}")
    for key, reason in preview.mail_failures:
        click.echo(f"preview email for {key[:12]} not delivered yet: {reason}", err=True)


def print_log(
    builds: Sequence[Any], branch: str, *, as_json: bool = False, zone: tzinfo | None = None
) -> None:
    """Print ``deploybot log``: one line per commit of the publish branch, newest first
    (``<commit 12>  <committer date>  source <12>  <why>``, the source commit its tree was
    built from, :func:`deploybot.publish.history.describe`), every date in ``zone`` (None: the
    local time); or, ``as_json``, a JSON list of :func:`deploybot.publish.history.entry` (each
    date with its own offset)."""
    from deploybot.publish import history

    if as_json:
        click.echo(json.dumps([history.entry(build) for build in builds], indent=2))
        return
    if not builds:
        click.echo(f"nothing published on {branch} yet")
    for build in builds:
        when = build.committed.astimezone(zone).strftime("%Y-%m-%d %H:%M:%S %z")
        built_from = history.built_from(build)
        source = f"  source {built_from[:12]}" if built_from else ""
        click.echo(f"{build.commit[:12]}  {when}{source}  {history.describe(build)}")


def _print_mail_failures(result: RunResult, config: Config) -> None:
    # lazy on purpose (see the module docstring)
    from deploybot.notify.deliver.outbox import describe_key, refusal_line

    for key, reason in result.mail_failures:
        click.echo(f"{describe_key(key)} not delivered (kept in the outbox): {reason}", err=True)
    for key, reason in result.mail_refused:
        click.echo(refusal_line(key, reason, config.path), err=True)


def _listed(paths: Sequence[str], most: int = 5) -> str:
    """``a, b, c`` (at most ``most`` paths, then ``and N more``)."""
    more = len(paths) - most
    return ", ".join(paths[:most]) + (f" and {more} more" if more > 0 else "")


def _channel(key: str, config: Config) -> str:
    if key.startswith("status-"):
        return f"{config.status.api} ({config.status.context})"
    return "the webhook" if key.startswith("webhook-") else config.notify.transport


def print_build(build: Any, out: Path) -> None:
    """Print the result of ``deploybot build``: file count, output folder, warnings."""
    for warning in build.warnings:
        click.echo(format_warning(warning), err=True)
    n = len(build.files)
    click.echo(f"built {n} file{'s' if n != 1 else ''} into {out}")


def print_preview_ready(url: str) -> None:
    """Print where ``deploybot preview`` serves the site."""
    click.echo(f"serving at {url} (Ctrl-C to stop)")


def print_preview_build(outcome: Any, saved: set[str] | None) -> None:
    """Print one preview build (:class:`~deploybot.livepreview.builder.BuildOutcome`): its
    warnings, then one line: what it built and how long it took, or its error (stderr)."""
    for warning in outcome.warnings:
        click.echo(format_warning(warning), err=True)
    what = "" if not saved else f" for {_saved(saved)}"
    if not outcome.ok:
        click.echo(f"error: {outcome.error}", err=True)
        click.echo("  (still serving the last good build; fix it and save)", err=True)
        return
    n = len(outcome.changed)
    kind = f"full build: {outcome.reason}" if outcome.full else "incremental"
    if not outcome.full and not n:
        kind = outcome.reason or "nothing changed"
    click.echo(f"built {n} file{'s' if n != 1 else ''}{what} in {outcome.seconds:.2f} s ({kind})")


def _saved(saved: set[str]) -> str:
    """The saved paths, shortened: the first two and how many more."""
    names = sorted(saved)
    more = f" and {len(names) - 2} more" if len(names) > 2 else ""
    return ", ".join(names[:2]) + more


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


def print_delivery(report: Any, config: Config) -> None:
    """Print what an outbox delivery did: one line per message sent, failed or refused
    (:func:`deploybot.notify.deliver.outbox.refusal_line`)."""
    from deploybot.notify.deliver.outbox import refusal_line  # lazy on purpose: module doc

    for key in report.sent:
        click.echo(f"sent {key}")
    for key, reason in report.failed:
        click.echo(f"not delivered {key}: {reason}", err=True)
    for key, reason in report.refused:
        click.echo(refusal_line(key, reason, config.path), err=True)


def format_warning(warning: RenderWarning) -> str:
    """Return ``"warning: PATH:LINE: MESSAGE"`` for a render warning (one line)."""
    where = warning.path if warning.line is None else f"{warning.path}:{warning.line}"
    return f"warning: {where}: {warning.message}"
