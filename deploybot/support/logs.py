"""Log lines for every command, the daemon and its build processes: one line per event,
on stderr.

Under systemd (stderr is the journal: :mod:`deploybot.support.journal`) every line starts with
its syslog priority, ``<3>`` error, ``<4>`` warning, ``<6>`` info, ``<7>`` debug, which
journald reads as the line's priority (sd-daemon(3)); the journal adds the time. Elsewhere
a daemon's line starts with the time and the level, a command's is the message alone
(with ``-v``: its level and logger). A message that holds line breaks (a ``-v``
traceback) keeps its priority on every line. Every line passes
:class:`deploybot.support.redact.RedactingFilter`, so no secret reaches the log.
"""

from __future__ import annotations

import logging
import re
import sys

from deploybot.support import journal
from deploybot.support.errors import one_line
from deploybot.support.redact import RedactingFilter

_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NOISY = ("filelock", "dulwich", "urllib3", "aiohttp.access", "asyncio")


class EventFormatter(logging.Formatter):
    """``prefix message`` under journald (the stream adds the priority:
    :class:`PriorityHandler`), else ``YYYY-mm-dd HH:MM:SS LEVEL prefix message``;
    ``prefix`` names the process (``site NAME:`` in a build process)."""

    def __init__(self, journal: bool, prefix: str = "") -> None:
        super().__init__("%(message)s")
        self.journal = journal
        self.prefix = prefix

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if self.journal:
            head = self.prefix
        else:
            when = self.formatTime(record, "%Y-%m-%d %H:%M:%S")
            head = f"{when} {record.levelname} {self.prefix}"
        return "\n".join(head + line for line in text.splitlines() or [""])


class PriorityHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A handler on ``sys.stderr`` (made after :func:`journal.install`) whose every line
    starts with the record's syslog priority when stderr is the journal."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        with journal.priority(self.stream, journal.syslog_priority(record.levelno)):
            super().emit(record)


class BadRequestFilter(logging.Filter):
    """For aiohttp's server logger: a request it could not parse (a header over 8 KB, a
    long URL, too many headers, a bare LF: ``aiohttp.http_exceptions.HttpProcessingError``
    with a 4xx code, answered 400 by aiohttp) becomes one warning line, not an error with
    its traceback: anyone can send one, and it is no fault of the daemon. Other errors
    (a handler's bug: 500) keep their traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        from aiohttp.http_exceptions import HttpProcessingError

        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError) and 400 <= exc.code < 500:
            remote = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
            record.msg = "bad request from %s: %d %s"
            record.args = (remote, exc.code, printable(one_line(exc.message))[:300])
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.exc_info, record.exc_text = None, None
        return True


def printable(text: str, limit: int | None = None) -> str:
    """``text`` with its control characters (C0, DEL, C1, U+2028, U+2029: all that
    ``str.splitlines`` splits on) and lone surrogates (a JSON ``"\\ud800"``, a header
    byte that is no UTF-8) written as Python escapes (``\\n``, ``\\x1b``, ``\\ud800``), so
    a value from a request or a payload keeps its log line one line, cannot forge another
    (or a journald ``<N>`` priority) and encodes as UTF-8. With ``limit``, at most that
    many characters of the escaped text are kept, then ``... (N more)``: a payload's
    string may be megabytes, a log line and an answer stay short."""
    escaped = _UNSAFE.sub(lambda m: repr(m.group())[1:-1], text)
    if limit is not None and len(escaped) > limit:
        return f"{escaped[:limit]}... ({len(escaped) - limit} more)"
    return escaped


def setup(*, verbose: bool, prefix: str = "") -> None:
    """For the daemon and its processes: every log record to stderr through
    :class:`EventFormatter` (replacing the handler the command line set); the daemon's own
    loggers at INFO (DEBUG with ``verbose``), libraries at WARNING."""
    _handle(EventFormatter(_journal(), prefix), verbose=verbose)
    logging.getLogger("deploybot.daemon").setLevel(logging.DEBUG if verbose else logging.INFO)
    server = logging.getLogger("aiohttp.server")
    if not any(isinstance(f, BadRequestFilter) for f in server.filters):
        server.addFilter(BadRequestFilter())


def setup_command(*, verbose: bool) -> None:
    """For a command (``run-once``, ``build``...): warnings and errors to stderr, the
    message alone (with ``verbose``: every record, with its level and logger), replacing
    the one set before (``-v`` may come after the command's name); urllib3's retry
    warnings only with ``verbose`` (the error line says what failed)."""
    shape = "%(levelname)s %(name)s: %(message)s" if verbose else "%(message)s"
    _handle(logging.Formatter(shape), verbose=verbose)
    logging.getLogger("urllib3").setLevel(logging.WARNING if verbose else logging.ERROR)


def _journal() -> bool:
    journal.install()
    return journal.is_installed(sys.stderr)


def _handle(formatter: logging.Formatter, *, verbose: bool) -> None:
    _journal()
    handler = PriorityHandler()
    handler.setFormatter(formatter)
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, PriorityHandler)]:
        root.removeHandler(old)  # one of ours, set before: -v came late, or serve's own
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    # Lock acquire/release, raw protocol lines, each request's path (a webhook's secret).
    for noisy in _NOISY:
        logging.getLogger(noisy).setLevel(logging.WARNING)
