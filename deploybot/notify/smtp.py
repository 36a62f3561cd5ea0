"""SMTP delivery (RFC 5321) with one deadline for the whole exchange.

Apart from :mod:`.transport` so that smtplib and ssl (and the email package smtplib pulls
in) are imported only by a run that sends over SMTP.
"""

from __future__ import annotations

import logging
import smtplib
import socket
import ssl
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from deploybot.config import SmtpConfig
from deploybot.errors import NotifyError, one_line
from deploybot.notify.deadline import Deadline, deadline_reader
from deploybot.notify.transport import to_crlf

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

log = logging.getLogger("deploybot.notify.transport")  # where these lines always came from


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
    connect to the end of DATA, however slowly the server answers (:mod:`.deadline`).
    ``BODY=8BITMIME`` is declared when the server offers it. Once the server has accepted
    the message, a failing QUIT is only logged: a retry would send it twice.

    Raises:
        NotifyError: connection, TLS, login, timeout or any refusal; a one-line reason.
    """
    where = f"{smtp.host}:{smtp.port}"
    deadline = Deadline(smtp.timeout)
    try:
        client = _connect(smtp, ssl_context, deadline)
        try:
            if smtp.username is not None and password is not None:
                client.login(smtp.username, password)
            client.ehlo_or_helo_if_needed()
            options = ["BODY=8BITMIME"] if client.has_extn("8bitmime") else []
            refused = client.sendmail(sender, list(recipients), to_crlf(message), options)
        except BaseException:
            client.close()
            raise
    except smtplib.SMTPRecipientsRefused as exc:
        reason = _refusals(exc.recipients)
        raise NotifyError(f"SMTP {where}: all recipients refused: {reason}") from exc
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


class _Bounded(smtplib.SMTP):
    """smtplib's client with every socket operation bounded by one :class:`Deadline`:
    connect (and the TLS handshake), each command sent and each reply read."""

    def __init__(self, host: str, port: int, *, deadline: Deadline, **kwargs: Any) -> None:
        self.deadline = deadline
        super().__init__(host, port, timeout=deadline.left(), **kwargs)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        return super()._get_socket(host, port, self.deadline.left(timeout))  # type: ignore[misc,no-any-return]

    def send(self, s: ReadableBuffer | str) -> None:
        self.deadline.bound(self.sock)
        super().send(s)

    def getreply(self) -> tuple[int, bytes]:
        if self.file is None and self.sock is not None:
            self.file = deadline_reader(self.sock, self.deadline)
        return super().getreply()

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
