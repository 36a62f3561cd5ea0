"""SMTP delivery (RFC 5321) with one deadline for the whole exchange and bounded replies.

Apart from :mod:`.transport` so that smtplib and ssl (and the email package smtplib pulls
in) are imported only by a run that sends over SMTP.

What a server may make the client hold is bounded as well as how long it may take: smtplib
limits each reply *line* to 8 KiB but keeps reading continuation lines (``250-...``) for as
long as they come, so a hostile server streaming them filled gigabytes before the deadline.
A reply of more than :data:`MAX_REPLY_LINES` lines or :data:`MAX_REPLY_BYTES` bytes is
refused (:class:`ReplyTooLong`, a NotifyError for the caller). Real replies are far
smaller: an EHLO reply lists a few dozen extensions, and RFC 5321 §4.5.3.1.5 limits a reply
line to 512 octets.
"""

from __future__ import annotations

import io
import logging
import re
import smtplib
import socket
import ssl
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from deploybot.config.schema import SmtpConfig
from deploybot.notify.deliver.outbox import Refused
from deploybot.notify.deliver.seven_bit import for_smtp
from deploybot.support.deadline import Deadline, deadline_reader
from deploybot.support.errors import NotifyError, one_line

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

log = logging.getLogger("deploybot.notify.transport")  # where these lines always came from

MAX_REPLY_LINES = 1000
"""The most lines one SMTP reply (greeting, EHLO, any command's) may have."""
MAX_REPLY_BYTES = 64 * 1024
"""The most bytes one SMTP reply may have, its line ends included."""
_EOL_RE = re.compile(rb"\r\n|\r|\n")


class ReplyTooLong(smtplib.SMTPException):
    """The server's reply passed :data:`MAX_REPLY_LINES` lines or :data:`MAX_REPLY_BYTES`
    bytes: whatever it is, it is not an SMTP server worth waiting for."""


def send_smtp(
    message: bytes,
    smtp: SmtpConfig,
    *,
    sender: str,
    recipients: Sequence[str],
    password: str | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> None:
    """Send ``message`` over SMTP (RFC 5321) to ``recipients`` with envelope ``sender``.

    ``smtp.security``: ``none``; ``starttls`` (RFC 3207, fails if the server does not offer
    it); ``ssl`` (implicit TLS, RFC 8314). Certificates are verified with
    ``ssl.create_default_context()`` unless ``ssl_context`` is given. Logs in when
    ``smtp.username`` is set. ``smtp.timeout`` (seconds) bounds the whole exchange, from
    connect to the end of DATA, however slowly the server answers
    (:mod:`deploybot.support.deadline`). An 8-bit body goes as it is, with ``BODY=8BITMIME``, only
    to a server that offers 8BITMIME; else (or when a line is too long for SMTP) it goes
    quoted-printable (:func:`.seven_bit.for_smtp`). A reply of more than :data:`MAX_REPLY_LINES`
    lines or :data:`MAX_REPLY_BYTES` bytes ends the exchange. Once the server has accepted
    the message, a failing QUIT is only logged: a retry would send it twice.

    Raises:
        Refused: every recipient refused with a 5xx reply (RFC 5321 §4.2.1: permanent;
            ``550 no such user``): the reason names each and the server's reply.
        NotifyError: connection, TLS, login, timeout, a reply too long, or any other
            refusal; a one-line reason.
    """
    where = f"{smtp.host}:{smtp.port}"
    deadline = Deadline(smtp.timeout)
    try:
        client = _connect(smtp, ssl_context, deadline)
        try:
            if smtp.username is not None and password is not None:
                client.login(smtp.username, password)
            client.ehlo_or_helo_if_needed()
            offered = client.has_extn("8bitmime")
            data, eight_bit = for_smtp(message, eight_bit_ok=offered)
            options = ["BODY=8BITMIME"] if offered and eight_bit else []
            refused = client.sendmail(sender, list(recipients), to_crlf(data), options)
        except BaseException:
            client.close()
            raise
    except smtplib.SMTPRecipientsRefused as exc:
        reason = _refusals(exc.recipients)
        permanent = all(500 <= code < 600 for code, _ in exc.recipients.values())
        error = Refused if permanent and exc.recipients else NotifyError
        raise error(f"SMTP {where}: all recipients refused: {reason}") from exc
    except smtplib.SMTPResponseException as exc:
        reason = one_line(exc.smtp_error)
        raise NotifyError(f"SMTP {where}: {exc.smtp_code} {reason}") from exc
    except (smtplib.SMTPException, OSError) as exc:  # ssl.SSLError and timeouts are OSErrors
        if deadline.passed:
            timeout = f"no complete answer within the {smtp.timeout:g} s timeout"
            raise NotifyError(f"SMTP {where}: {timeout}") from exc
        raise NotifyError(f"SMTP {where}: {one_line(exc)}") from exc
    _quit(client, where)
    if refused:  # accepted for the others: a retry would duplicate it for them
        log.warning("SMTP %s: some recipients refused: %s", where, _refusals(refused))


def _quit(client: smtplib.SMTP, where: str) -> None:
    """Say QUIT after an accepted message; a failure here does not undo the delivery."""
    try:
        client.quit()
    except (smtplib.SMTPException, OSError) as exc:
        log.info("SMTP %s: QUIT after delivery failed: %s", where, one_line(exc))
    finally:
        client.close()


class _ReplyReader:
    """The socket reader smtplib reads replies from (its ``file``), counting the lines and
    bytes of the reply being read; raises :class:`ReplyTooLong` past the limits (smtplib
    turns that, an OSError, into SMTPServerDisconnected: ``too_long`` keeps the reason)."""

    def __init__(self, reader: io.BufferedReader) -> None:
        self.reader = reader
        self.lines = 0
        self.size = 0
        self.too_long: ReplyTooLong | None = None

    def start_reply(self) -> None:
        """A new reply starts: count from zero."""
        self.lines = self.size = 0

    def readline(self, limit: int = -1) -> bytes:
        """One reply line (at most ``limit`` bytes, as ``BufferedReader.readline``).

        Raises:
            ReplyTooLong: the reply so far has too many lines or bytes.
        """
        line = self.reader.readline(limit)
        self.lines += 1
        self.size += len(line)
        if self.lines > MAX_REPLY_LINES:
            self.too_long = ReplyTooLong(f"is longer than {MAX_REPLY_LINES} lines")
        elif self.size > MAX_REPLY_BYTES:
            self.too_long = ReplyTooLong(f"is longer than {MAX_REPLY_BYTES} bytes")
        if self.too_long is not None:
            raise self.too_long
        return line

    def close(self) -> None:
        self.reader.close()


class _Bounded(smtplib.SMTP):
    """smtplib's client with every socket operation bounded by one :class:`Deadline`:
    connect (and the TLS handshake), each command sent and each reply read; and each reply
    bounded in size (:class:`_ReplyReader`)."""

    def __init__(self, host: str, port: int, *, deadline: Deadline, **kwargs: Any) -> None:
        self.deadline = deadline
        self.command = ""  # the last command sent: what a reply answers
        super().__init__(host, port, timeout=deadline.left(), **kwargs)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        return super()._get_socket(host, port, self.deadline.left(timeout))  # type: ignore[misc,no-any-return]

    def send(self, s: ReadableBuffer | str) -> None:
        self.deadline.bound(self.sock)
        super().send(s)

    def putcmd(self, cmd: str, args: str = "") -> None:
        self.command = cmd.upper()
        super().putcmd(cmd, args)

    def getreply(self) -> tuple[int, bytes]:
        if self.file is None and self.sock is not None:
            self.file = _ReplyReader(deadline_reader(self.sock, self.deadline))
        reader = self.file
        if isinstance(reader, _ReplyReader):
            reader.start_reply()
        try:
            return super().getreply()
        except smtplib.SMTPServerDisconnected as exc:
            if not isinstance(reader, _ReplyReader) or reader.too_long is None:
                raise
            answered = self.command or "the greeting"
            why = f"the reply to {answered} {reader.too_long}: the server is not speaking SMTP"
            raise ReplyTooLong(why) from exc

    def starttls(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        self.deadline.bound(self.sock)
        return super().starttls(*args, **kwargs)


class _BoundedSSL(_Bounded, smtplib.SMTP_SSL):
    """:class:`_Bounded` over implicit TLS (``smtplib.SMTP_SSL``)."""


def _connect(
    smtp: SmtpConfig, ssl_context: ssl.SSLContext | None, deadline: Deadline
) -> smtplib.SMTP:
    context = ssl_context or ssl.create_default_context()
    if smtp.security == "ssl":
        return _BoundedSSL(smtp.host, smtp.port, deadline=deadline, context=context)
    client = _Bounded(smtp.host, smtp.port, deadline=deadline)
    if smtp.security == "starttls":
        try:
            client.starttls(context=context)
        except BaseException:
            client.close()
            raise
    return client


def _refusals(refused: Mapping[str, tuple[int, bytes]]) -> str:
    return "; ".join(f"{addr} ({code} {one_line(msg)})" for addr, (code, msg) in refused.items())


def to_crlf(message: bytes) -> bytes:
    """Return ``message`` with every line end (``\\n``, ``\\r\\n``, lone ``\\r``) as CRLF.

    SMTP requires CRLF and forbids bare CR/LF (RFC 5321 §2.3.8); smtplib only converts ``str``
    messages, so bytes are converted here, the same way (``smtplib._fix_eols``).
    """
    return _EOL_RE.sub(b"\r\n", message)
