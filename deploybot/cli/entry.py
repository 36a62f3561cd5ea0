"""The ``deploybot`` console script: a no-op ``run-once`` answered before click is imported.

``deploybot run-once [--config PATH]`` whose last run found the publish branch up to date,
with nothing changed since (:mod:`deploybot.pipeline.noop`), prints the same line and exits 0 having
imported little beyond ``os`` and ``fcntl`` (not even ``tomllib`` for the usual
``[state] dir = "..."``): about what ``git fetch`` costs.
Every other command line, and every run that cannot be told so cheaply, is :mod:`.commands`'s.
"""

from __future__ import annotations

import sys

from deploybot.config.where import default_config_name

QUIET = ("-q", "--quiet")


def noop_config(argv: list[str]) -> str | None:
    """The config file of a plain ``run-once`` command line (no other option than
    ``--config`` and ``-q``/``--quiet``), else None."""
    if not argv or argv[0] != "run-once":
        return None
    rest = [arg for arg in argv[1:] if arg not in QUIET]
    if not rest:
        return default_config_name()
    if len(rest) == 2 and rest[0] == "--config" and rest[1] and not rest[1].startswith("-"):
        return rest[1]
    if len(rest) == 1 and rest[0].startswith("--config=") and len(rest[0]) > len("--config="):
        return rest[0].removeprefix("--config=")
    return None


OUT_OF_MEMORY = "deploybot: error: out of memory\n"
EX_TEMPFAIL = 75  # deploybot.support.errors.EX_TEMPFAIL (not imported: it is heavy)
EX_INTERRUPTED = 130  # deploybot.support.errors.EX_INTERRUPTED
INTERRUPTED = "deploybot: interrupted\n"  # deploybot.support.errors.INTERRUPTED


def main() -> None:
    """Run the command line; a MemoryError no command caught (while importing, parsing
    the command line) is one line and exit 75, as the commands make theirs; a write to a
    stdout whose reader is gone (the no-op line into ``| head``) ends it quietly, as
    :mod:`deploybot.cli.stdio` says; Ctrl-C there is one line and exit 130, as in a command."""
    try:
        _main()
    except MemoryError:
        sys.stderr.write(OUT_OF_MEMORY)
        sys.exit(EX_TEMPFAIL)
    except KeyboardInterrupt:
        sys.stderr.write(INTERRUPTED)
        sys.exit(EX_INTERRUPTED)
    except BrokenPipeError:
        from deploybot.cli import stdio

        if not stdio.output_gone():
            raise
        stdio.leave_quietly()


def _main() -> None:
    """Answer a no-op ``run-once`` from its stamp, else run the click command line."""
    from deploybot.support.journal import install

    install()  # under systemd, each line starts with its priority (a usage error's too)
    config = noop_config(sys.argv[1:])
    if config is not None:
        from deploybot.pipeline.noop import cli_check

        line = cli_check(config)
        if line is not None:
            if not any(arg in QUIET for arg in sys.argv[2:]):
                sys.stdout.write(line + "\n")
                sys.stdout.flush()
            return
    from deploybot.cli.commands import main as cli_main

    cli_main()
