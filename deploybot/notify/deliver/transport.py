"""Deliver a composed message (``bytes``, ``\\n`` line endings) by mbox, SMTP, sendmail or stdout.

Every function raises :class:`~deploybot.support.errors.NotifyError` (exit 75, "try again later")
with a one-line reason when delivery fails, so the message stays in the outbox. Configuration
problems that no retry can fix (a missing password variable) are
:class:`~deploybot.support.errors.ConfigError` and are raised by :func:`make_transport`, before any
message is touched.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from email.utils import parseaddr
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from deploybot.config.schema import NotifyConfig, SmtpConfig
from deploybot.notify.deliver.mbox import MboxTransport, append
from deploybot.support.errors import ConfigError, NotifyError, one_line

if TYPE_CHECKING:
    import ssl

Send = Callable[[bytes], None]

log = logging.getLogger("deploybot.notify.transport")

SENDMAIL_FALLBACKS = ("/usr/sbin/sendmail", "/usr/lib/sendmail")


def make_transport(
    notify: NotifyConfig,
    *,
    ssl_context: ssl.SSLContext | None = None,
    stream: BinaryIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> Send:
    """Return ``send(message: bytes) -> None`` for ``notify.transport``.

    Transports: ``smtp``, ``sendmail``, ``mbox``, ``stdout`` (to ``stream``, default
    ``sys.stdout.buffer``) and ``none`` (drops the message).

    Args:
        ssl_context: used for ``starttls``/``ssl`` instead of ``ssl.create_default_context()``
            (tests pass one that trusts their self-signed certificate).
        environ: where ``notify.smtp.password_env`` is looked up (default ``os.environ``).

    Raises:
        ConfigError: unknown transport; ``mbox`` without a path; SMTP ``username`` set but
            ``password_env`` unset, or the variable it names is not set.
    """
    kind = notify.transport
    envelope_from = bare_address(notify.sender)
    if kind == "smtp":
        # Here, not at the top: smtplib and ssl are imported only by a run that sends mail.
        from deploybot.notify.deliver.smtp import send_smtp

        password = smtp_password(notify.smtp, os.environ if environ is None else environ)
        recipients = [bare_address(a) for a in notify.to]
        return lambda message: send_smtp(
            message,
            notify.smtp,
            sender=envelope_from,
            recipients=recipients,
            password=password,
            ssl_context=ssl_context,
        )
    if kind == "sendmail":
        return lambda message: send_sendmail(message, sender=envelope_from)
    if kind == "mbox":
        if notify.mbox is None:
            raise ConfigError("'notify.mbox' is required when notify.transport = \"mbox\"")
        return MboxTransport(notify.mbox, envelope_from)
    if kind == "stdout":
        return lambda message: write_stream(message, stream)
    if kind == "none":
        return _drop
    raise ConfigError(
        f"'notify.transport' must be smtp, sendmail, mbox, stdout or none, not {kind!r}"
    )


def _drop(message: bytes) -> None:
    """The ``none`` transport: nothing is sent."""


def bare_address(address: str) -> str:
    """Return the ``addr`` of ``"Name <addr>"`` (or ``addr`` itself), for SMTP envelopes."""
    return parseaddr(address)[1] or address.strip()


def smtp_password(smtp: SmtpConfig, environ: Mapping[str, str]) -> str | None:
    """Return the SMTP password from the variable named by ``password_env``; None if no login.

    Raises:
        ConfigError: ``username`` is set but ``password_env`` is not, or the variable is unset.
    """
    if smtp.username is None:
        return None
    if not smtp.password_env:
        raise ConfigError(
            "'notify.smtp.password_env' must name an environment variable "
            "when 'notify.smtp.username' is set"
        )
    password = environ.get(smtp.password_env)
    if password is None:
        raise ConfigError(
            f"'notify.smtp.password_env': environment variable {smtp.password_env} is not set"
        )
    return password


def find_sendmail(path: str | None = None) -> str | None:
    """Return ``sendmail`` from ``PATH`` (or ``path``), else /usr/sbin's or /usr/lib's, or None."""
    found = shutil.which("sendmail", path=path)
    if found:
        return found
    return next((p for p in SENDMAIL_FALLBACKS if os.access(p, os.X_OK)), None)


def send_sendmail(message: bytes, *, sender: str, timeout: float = 60.0) -> None:
    """Pipe ``message`` to ``sendmail -oi -t -f <sender>`` (git-multimail's SendMailer).

    ``-t`` takes the recipients from the ``To`` header; ``-oi`` keeps a lone ``.`` line.

    Raises:
        NotifyError: no sendmail found, it ran longer than ``timeout`` seconds, or it exited
            non-zero (the reason quotes its first stderr line).
    """
    command = find_sendmail()
    if command is None:
        raise NotifyError("sendmail: no sendmail program on PATH, /usr/sbin or /usr/lib")
    argv = [command, "-oi", "-t", "-f", sender]
    try:
        done = subprocess.run(argv, input=message, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise NotifyError(f"sendmail: no answer after {timeout:g} s") from None
    except OSError as exc:
        raise NotifyError(f"sendmail: cannot run {command}: {exc.strerror or exc}") from exc
    if done.returncode != 0:
        first = next(iter(done.stderr.decode("utf-8", "replace").splitlines()), "").strip()
        raise NotifyError(f"sendmail exited with status {done.returncode}: {first or '-'}")


def append_mbox(message: bytes, path: Path, *, sender: str = "MAILER-DAEMON") -> None:
    """Append ``message`` to the mbox at ``path`` (created if missing), under its locks.

    A missing file is created 0600 (an existing one keeps its mode). The format is
    :class:`mailbox.mbox`'s (a ``From <sender> <asctime UTC>`` line, body lines
    starting ``From `` escaped as ``>From ``, an empty line after the message), fsynced;
    ``fcntl`` + dot-file locking, a stale dot-lock broken: see :mod:`.mbox`.

    Raises:
        NotifyError: the file is locked by a live process, or cannot be read or written.
    """
    append(message, path, sender=bare_address(sender))


def write_stream(message: bytes, stream: BinaryIO | None = None) -> None:
    """Write all of ``message`` to ``stream`` (default ``sys.stdout.buffer``) and flush it.

    A write into a pipe whose reader goes away part way (``| head -1``) returns a short
    count rather than raising (Python's buffered writer passes on what write(2) returned),
    so the rest is written again until it is all out, or the next write fails: the
    BrokenPipeError then ends the command as :mod:`deploybot.cli.stdio` says (141).

    Raises:
        NotifyError: the stream cannot be written (from the OSError, a BrokenPipeError for
            a reader gone).
    """
    out = stream if stream is not None else sys.stdout.buffer
    left = memoryview(message)
    try:
        while left:
            written = out.write(left)
            if not written:  # a stream that takes nothing would loop here for ever
                raise OSError("the stream took none of the message")
            left = left[written:]
        out.flush()
    except OSError as exc:
        raise NotifyError(f"stdout: {one_line(str(exc))}") from exc
