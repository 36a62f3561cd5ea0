"""The ``deploybot`` command line: click commands only.

Each command parses its options, calls one function, and maps
:class:`~deploybot.support.errors.DeploybotError` subclasses to sysexits-style exit codes
(0 done or nothing to do, 1 bad input in the source, 75 try again later, 78 bad config),
printing one clear line; ``-v`` adds detail and the traceback.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import sys
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from deploybot import __version__
from deploybot.cli import stdio
from deploybot.config.where import default_config_name
from deploybot.support import journal, logs
from deploybot.support.errors import (
    EX_CONFIG,
    EX_INTERRUPTED,
    EX_TEMPFAIL,
    INTERRUPTED,
    DeploybotError,
    holds,
    memory_error,
)
from deploybot.support.redact import redact_text

if TYPE_CHECKING:
    from deploybot.config.schema import Config, RenderConfig

F = TypeVar("F", bound=Callable[..., Any])

_config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Config file (default: $DEPLOYBOT_CONFIG, else ./deploybot.toml).",
)


def _handle_errors(func: F) -> F:
    """Turn a DeploybotError into its exit code and one line on stderr, and running out of
    memory (a MemoryError, or an exception raised while a library cleaned up after one:
    :func:`~deploybot.support.errors.holds`) into one line and exit 75, or what the error
    naming the source file says (:func:`~deploybot.support.errors.memory_error`).
    A write to a stdout or stderr whose reader is gone (``| head``) ends the command
    quietly (:mod:`deploybot.cli.stdio`). Ctrl-C (SIGINT: a KeyboardInterrupt) is one line,
    ``deploybot: interrupted``, and exit 130; what the run did is kept or undone as for any
    stop (each stage is kill-safe). Any other exception (a bug) gives Python's traceback
    and exit 1, as uncaught, but redacted: its message may hold a URL with credentials."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            # Under systemd, what the command says on stderr as it runs is a warning; its
            # error line and a traceback (below, after the block) are errors.
            with journal.priority(sys.stderr, journal.WARNING):
                return func(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # click's own: it reports them
        except KeyboardInterrupt:  # not click's "Aborted!" and exit 1, the code for bad input
            click.echo(INTERRUPTED, err=True)
            sys.exit(EX_INTERRUPTED)
        except Exception as exc:
            _report(exc)

    return wrapper  # type: ignore[return-value]


def _report(exc: Exception) -> NoReturn:
    """Say what ended the command (see :func:`_handle_errors`) and exit with its code."""
    if holds(exc, BrokenPipeError) and stdio.output_gone():
        stdio.leave_quietly()
    if isinstance(exc, DeploybotError):
        line, code = redact_text(str(exc)), exc.exit_code
    elif holds(exc, MemoryError):
        error = memory_error(exc, _command())
        line, code = redact_text(str(error)), error.exit_code
    else:  # a bug: its traceback says where
        click.echo(redact_text(traceback.format_exc()).rstrip("\n"), err=True)
        sys.exit(1)
    if _verbose():
        click.echo(redact_text(traceback.format_exc()).rstrip("\n"), err=True)
    for each in line.split("\n"):  # a config file's errors: one line each
        click.echo(f"deploybot: error: {each}", err=True)
    sys.exit(code)


def _command() -> str:
    """The running command as its user types it: ``deploybot fleet status``."""
    names: list[str] = []
    ctx = click.get_current_context(silent=True)
    while ctx is not None and ctx.parent is not None:
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(["deploybot", *names])


def _verbose() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.find_root().obj and ctx.find_root().obj.get("verbose"))


def default_config_path() -> Path:
    """:func:`deploybot.config.load.default_config_path`, by :mod:`deploybot.config.where`
    (the rule's one home): the config loader (TOML, the schema's checks) is imported only
    by a command that reads a config (``notify --repo`` without one does not)."""
    return Path(default_config_name())


def load_config(path: Path) -> Config:
    """:func:`deploybot.config.load.load_config` (raises ``ConfigError``)."""
    from deploybot.config import load

    return load.load_config(path)


def load_build_config(path: Path) -> tuple[RenderConfig, Path]:
    """:func:`deploybot.config.load.load_build_config` (raises ``ConfigError``)."""
    from deploybot.config import load

    return load.load_build_config(path)


def _load(config_path: Path | None) -> Config:
    return load_config(config_path or default_config_path())


def _load_optional(config_path: Path | None) -> Config | None:
    """Load ``--config``, else the default config when that file exists, else None."""
    if config_path is not None:
        return load_config(config_path)
    default = default_config_path()
    return load_config(default) if default.is_file() else None


_VERBOSE_HELP = "Show detail, timings and tracebacks."


def _verbose_after(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """``-v`` after a command's name (``deploybot run-once -v``): as if it came before."""
    if value:
        ctx.find_root().obj["verbose"] = True
        logs.setup_command(verbose=True)


class _Commands(click.Group):
    """A group each of whose commands (and subgroups) takes ``-v``/``--verbose`` too."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        cmd.params.append(
            click.Option(
                ["-v", "--verbose", "verbose_after"], is_flag=True, expose_value=False,
                is_eager=True, callback=_verbose_after, help=_VERBOSE_HELP,
            )
        )  # fmt: skip
        super().add_command(cmd, name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help=_VERBOSE_HELP)
@click.version_option(__version__, prog_name="deploybot")
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """Publish a Jekyll-style site from git: source push -> build commit -> commit email."""
    ctx.obj = {"verbose": verbose}
    logs.setup_command(verbose=verbose)  # also: each line's priority under systemd


_retry_now_option = click.option(
    "--retry-now",
    is_flag=True,
    help="Retry waiting emails, webhook posts and commit statuses, ignoring backoff.",
)


@main.command("run-once")
@_config_option
@click.option("--full", is_flag=True, help="Build even if the source has not moved.")
@click.option(
    "--allow-older",
    is_flag=True,
    help="Publish even a source commit older than the one the publish branch was built from.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Publish even a build the publish guard stops (publish.max_removed, min_files), "
    'or its broken links (publish.broken_links = "fail").',
)
@_retry_now_option
@click.option(
    "-q", "--quiet", is_flag=True, help="Print errors only: nothing for cron to mail otherwise."
)
@_handle_errors
def run_once_cmd(
    config_path: Path | None,
    full: bool,
    allow_older: bool,
    force: bool,
    retry_now: bool,
    quiet: bool,
) -> None:
    """Fetch the source, build, publish one build commit and email it.

    A source commit that is an ancestor of the one the publish branch was built from (the
    source was rewound, or another instance published a newer build) is not published
    unless --allow-older. Nor is a build that would remove more than publish.max_removed
    of the published files or leave fewer than publish.min_files (exit 1), nor one with
    broken links when publish.broken_links is "fail" (exit 1), unless --force.
    Exit status: 0 published or nothing to do; 1 bad input in the source, or the publish
    guard or broken links stopped the build; 75 try again later (network, lock held, push
    rejected, mail not delivered); 78 bad config, or an email refused for good (every
    recipient refused with SMTP 5xx: it is kept in the outbox's failed/, told once, not
    retried). With
    --quiet, only what ends in an exit status other than 0 is printed: the error, an email
    not delivered or refused.
    """
    from deploybot.cli import report
    from deploybot.pipeline import run
    from deploybot.support import progress

    if quiet and not _verbose():
        logging.getLogger().setLevel(logging.ERROR)  # the stages' warnings too
    config = _load(config_path)
    with contextlib.nullcontext() if quiet else progress.shown("rendering"):
        result = run.run_once(
            config, full=full, retry_now=retry_now, allow_older=allow_older, force=force
        )
    report.print_run(result, config, verbose=_verbose(), quiet=quiet)
    if result.mail_failures or result.mail_refused:
        sys.exit(_delivery_status(result.mail_failures, result.mail_refused))


def _configs_option(text: str) -> Callable[[F], F]:
    """``--config`` given any number of times (the daemon's config, then site configs):
    ``config_paths``, a tuple of :class:`Path`."""
    option = click.option(
        "--config",
        "config_paths",
        multiple=True,
        type=click.Path(dir_okay=False, path_type=Path),
        help=text,
    )
    return option


@main.command("serve")
@_configs_option("The daemon's config, then more site configs (repeatable; default as run-once).")
@_handle_errors
def serve_cmd(config_paths: tuple[Path, ...]) -> None:
    """Serve webhooks and build on push: one site or many, until SIGTERM or SIGINT.

    The first --config is the daemon's: its [daemon] table (listen, secret_env,
    poll_interval, max_body_bytes, workers, stop_timeout, read_timeout, sites) and, when it
    has a [source], a site; each further --config and each file the daemon.sites glob
    matches is a site. POST /webhook/<site> (or /webhook, routed by repository) queues a
    build; GET /healthz and /metrics report. SIGHUP re-reads the configs. Exit status: 0
    after a stop; 75 another daemon runs on the same state; 78 bad config.
    """
    from deploybot.serve.service import serve

    sys.exit(serve(list(config_paths) or [default_config_path()], verbose=_verbose()))


def _queue_names(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    from deploybot.config.queue import is_queue_name

    names = value if isinstance(value, tuple) else (value,)
    for name in names:
        if name is not None and not is_queue_name(name):
            raise click.BadParameter(
                f"{name!r}: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter "
                "or digit"
            )
    return value


@main.command("worker")
@_configs_option("The daemon's config, then more site configs, as serve takes them (repeatable).")
@click.option(
    "--queues",
    "queues",
    multiple=True,
    callback=_queue_names,
    help="A shared queue to take jobs from (repeatable; default: the sites' [queue] name).",
)
@click.option(
    "--name", default=None, callback=_queue_names, help="This worker's name (default: host name)."
)
@click.option(
    "--state",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep each site's state in STATE/<site> (default: the site's state.dir).",
)
@_handle_errors
def worker_cmd(
    config_paths: tuple[Path, ...], queues: tuple[str, ...], name: str | None, state: Path | None
) -> None:
    """Run builds from the fleet's Redis queues ([queue] backend = "redis") until SIGTERM.

    Takes jobs from its own queue (sites it built last) and then the shared ones; each
    build holds its site's lease, so no site builds on two workers at once. SIGTERM or
    SIGINT: the running build finishes and its lease is released, then exit 0; a second
    signal ends it at once. Exit status: 75 another worker uses --state; 78 bad config.
    """
    from deploybot.serve.fleet import worker

    paths = list(config_paths) or [default_config_path()]
    sys.exit(worker.work(paths, name=name, state=state, queues=queues, verbose=_verbose()))


@main.group("fleet", cls=_Commands)
def fleet_group() -> None:
    """Look at a fleet of workers on Redis ([queue] backend = "redis")."""


@fleet_group.command("status")
@_configs_option("The daemon's config (its [queue] names Redis); more site configs are allowed.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@_handle_errors
def fleet_status_cmd(config_paths: tuple[Path, ...], as_json: bool) -> None:
    """List the sites: last result, lease holder, what is pending; then the queues and the
    workers. Exit status: 75 Redis unreachable; 78 bad config."""
    from deploybot.serve.fleet import status

    paths = list(config_paths) or [default_config_path()]
    view = status.read(paths)
    click.echo(status.as_json(view) if as_json else status.as_text(view))


@main.command("build")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@click.argument("out", type=click.Path(file_okay=False, path_type=Path))
@click.option("--rev", default=None, help="Build this git revision (default HEAD for a repo).")
@click.option(
    "--cutoff",
    type=click.DateTime(["%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S"]),
    default=None,
    help="Future cut-off (UTC), as a build record's future-cutoff (default: the build time).",
)
@click.option(
    "--theme-commit",
    default=None,
    help="Pin the site's git theme to this commit, as a build record's theme (default: where "
    "its ref points).",
)
@_config_option
@_handle_errors
def build_cmd(
    source: Path,
    out: Path,
    rev: str | None,
    cutoff: datetime | None,
    theme_commit: str | None,
    config_path: Path | None,
) -> None:
    """Render SOURCE (a folder or a git repository) into the folder OUT; no git writes.

    A bare repository, or any repository with --rev, is read from git objects at that
    revision; a plain folder (or a work tree without --rev) is read as it is on disk, so
    uncommitted edits can be previewed. Only the [render] keys of the config are used
    (--config, else $DEPLOYBOT_CONFIG or ./deploybot.toml when present), and its state
    folder's cache of highlighted code blocks. OUT must be empty,
    or a folder an earlier ``deploybot build`` made (its stale files are removed); it may
    be inside a SOURCE read from disk (``src src/_site``: it is not read then), not be
    SOURCE or hold it. Posts dated after --cutoff are left out; a published build's files
    are made again byte for byte with the build-source (else the source-commit) and the
    future-cutoff of its record (``git notes --ref=deploybot show BUILD``), and the commit of
    its ``theme`` with --theme-commit: the published
    tree also has .nojekyll (publish.nojekyll) and the publish.keep paths, OUT its
    .deploybot-build list.
    """
    from deploybot.cli import report
    from deploybot.pipeline import build_folder
    from deploybot.state import statedir
    from deploybot.support import progress

    render_config, cache_dir, themes_dir = None, None, None
    found = config_path or default_config_path()
    if config_path is not None or found.is_file():
        render_config, state_dir = load_build_config(found)
        cache_dir = statedir.build_cache(state_dir)
        themes_dir = state_dir / statedir.THEMES
    when = None if cutoff is None else cutoff.replace(tzinfo=UTC)
    with progress.shown("rendering"):
        build = build_folder.build_to_folder(
            source, out, rev=rev, render_config=render_config, cache_dir=cache_dir, cutoff=when,
            themes_dir=themes_dir, theme_commit=theme_commit,
        )  # fmt: skip
    report.print_build(build, out)


@main.command("preview")
@click.argument(
    "source", required=False, default=".", type=click.Path(file_okay=False, path_type=Path)
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=4000, show_default=True,
    help="Port to listen on (0: any free one), as jekyll serve's.",
)  # fmt: skip
@click.option(
    "--host", default=None,
    help="Address to listen on (default 127.0.0.1, this machine only; another is only used "
    "when given here).",
)  # fmt: skip
@click.option("--drafts", is_flag=True, help="Publish the posts of _drafts/ (jekyll --drafts).")
@click.option("--future", is_flag=True, help="Publish posts dated in the future (jekyll --future).")
@_config_option
@_handle_errors
def preview_cmd(
    source: Path,
    port: int,
    host: str | None,
    drafts: bool,
    future: bool,
    config_path: Path | None,
) -> None:
    """Serve SOURCE (default: .), a Jekyll site's folder, with live reload, until Ctrl-C.

    It is built into a temporary folder (removed on exit) and rebuilt incrementally on each
    save; the open pages reload by themselves, and a build error is shown on the page and
    here while the last good build stays served. Only the [render] keys of the config are
    used (--config, else $DEPLOYBOT_CONFIG or ./deploybot.toml when present), and its
    state folder's git themes.
    """
    from deploybot.cli import report
    from deploybot.livepreview.builder import PreviewSettings
    from deploybot.livepreview.session import DEFAULT_HOST, Preview, is_loopback, run_preview
    from deploybot.state import statedir

    settings = PreviewSettings(drafts=drafts, future=future)
    found = config_path or default_config_path()
    if config_path is not None or found.is_file():
        render_config, state_dir = load_build_config(found)
        settings.render = render_config
        settings.themes_dir = state_dir / statedir.THEMES
    host = host or DEFAULT_HOST
    if not is_loopback(host):
        click.echo(f"warning: listening on {host}: others can reach this preview", err=True)
    run_preview(Preview(source, host, port, settings), report.print_preview_ready,
                report.print_preview_build)  # fmt: skip


@main.command("log")
@_config_option
@click.option(
    "-n",
    "--max-count",
    "limit",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="Show this many commits of the publish branch.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of lines.")
@_handle_errors
def log_cmd(config_path: Path | None, limit: int, as_json: bool) -> None:
    """List what was published when, from which source commit, and why (full or
    incremental build, the source moved, render settings changed, a held-back post came
    due, --full...), newest first, every date in one zone (publish.timezone, else
    render.timezone, else local time): read from the publish branch and its build notes, so
    builds by run-once, the daemon and a fleet show alike. Exit status: 75 the publish
    repository cannot be reached or a run holds the lock; 78 bad config.
    """
    from deploybot.cli import report
    from deploybot.publish import history

    config = _load(config_path)
    builds = history.read(config, limit)
    zone = history.display_zone(config)
    report.print_log(builds, config.publish.branch, as_json=as_json, zone=zone)


_OUTBOX_CONFIG = "deploybot.outbox.config"
"""Where ``deploybot outbox --config C retry KEY`` leaves ``C`` for the subcommand."""


@main.group("outbox", cls=_Commands, invoke_without_command=True)
@_config_option
@_retry_now_option
@click.pass_context
@_handle_errors
def outbox_group(ctx: click.Context, config_path: Path | None, retry_now: bool) -> None:
    """List the emails, webhook posts and commit statuses waiting in the outbox: state,
    attempts, last error and next attempt, then those refused for good (kept in the
    outbox's failed/). With --retry-now, first try to deliver them all (exit 75 if some
    fail, 78 if one is refused).
    ``deploybot outbox retry KEY`` sends one again now, ``deploybot outbox drop KEY``
    removes one (KEY: its key as listed, or the start of it).
    """
    from deploybot.cli import report
    from deploybot.notify import stage as notify
    from deploybot.pipeline import mail
    from deploybot.state import statedir

    ctx.meta[_OUTBOX_CONFIG] = config_path
    if ctx.invoked_subcommand is not None:
        return
    config = _load(config_path)
    delivered = mail.deliver_outbox(config, retry_now=True) if retry_now else None
    if delivered is not None:
        report.print_delivery(delivered, config)
    report.print_outbox(notify.list_outbox(statedir.state_paths(config).outbox))
    if delivered is not None:
        sys.exit(_delivery_status(delivered.failed, delivered.refused))


@outbox_group.command("retry")
@click.argument("key")
@_config_option
@click.pass_context
@_handle_errors
def outbox_retry_cmd(ctx: click.Context, key: str, config_path: Path | None) -> None:
    """Send the email, webhook post or commit status KEY now: one refused for good goes back
    into the outbox, one waiting for its backoff waits no more; then what is due is delivered, with
    the config as it is now (over SMTP, to the notify.to it names now). Exit 0 sent, 75
    not delivered (it waits), 78 refused again.
    """
    from deploybot.cli import report
    from deploybot.pipeline import mail

    config = _load(config_path or ctx.meta.get(_OUTBOX_CONFIG))
    delivered = mail.retry_waiting(config, key)
    report.print_delivery(delivered, config)
    sys.exit(_delivery_status(delivered.failed, delivered.refused))


@outbox_group.command("drop")
@click.argument("key")
@_config_option
@click.pass_context
@_handle_errors
def outbox_drop_cmd(ctx: click.Context, key: str, config_path: Path | None) -> None:
    """Remove the email, webhook post or commit status KEY from the outbox (waiting or
    refused) unsent: it is kept in the outbox's dropped/ for 90 days, and never sent.
    """
    from deploybot.notify.deliver.outbox import describe_key
    from deploybot.pipeline import mail

    config = _load(config_path or ctx.meta.get(_OUTBOX_CONFIG))
    click.echo(f"dropped {describe_key(mail.drop_waiting(config, key))}")


def _delivery_status(failed: tuple[object, ...], refused: tuple[object, ...]) -> int:
    """The exit status after a delivery: 78 when a message was refused for good (an
    address of the configuration, ``notify.to``, is refused), else 75 when one still
    waits, else 0."""
    return EX_CONFIG if refused else EX_TEMPFAIL if failed else 0


@main.command("notify")
@click.option("--commit", "rev", required=True, help="The commit to announce (id or ref).")
@click.option(
    "--repo",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Repository, bare or not (default: the publish mirror with a config, else .).",
)
@click.option(
    "--branch",
    default=None,
    help="Branch named in the email (default: publish.branch with a config, else HEAD's).",
)
@click.option(
    "--transport",
    type=click.Choice(["stdout", "mbox", "smtp", "sendmail"]),
    default=None,
    help="How to send it (default: notify.transport with a config, else stdout).",
)
@_config_option
@_handle_errors
def notify_cmd(
    rev: str, repo: Path | None, branch: str | None, transport: str | None, config_path: Path | None
) -> None:
    """Compose the commit email for an existing commit and send it now (old = first parent).

    For re-sending a lost email or checking the format against any history; --transport
    stdout prints the whole message, headers included. The outbox is not used. With a
    config, the email names the source commits the build was made from (its note, and the
    source mirror under state.dir). Exit status: 0 sent; 1 not a repository, or a git
    object the email needs is missing or cannot be read (the line names it, the file that
    held it and the repository); 2 no such commit; 75 not delivered; 78 bad config.
    """
    from deploybot.pipeline import mail

    config = _load_optional(config_path)
    commit, sent_via = mail.resend(config, rev, repo=repo, branch=branch, transport=transport)
    if sent_via != "stdout":
        click.echo(f"email for {commit[:12]} sent via {sent_via}")


if __name__ == "__main__":  # pragma: no cover
    main()
