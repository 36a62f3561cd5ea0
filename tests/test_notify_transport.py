"""Transports against real parts: aiosmtpd on 127.0.0.1 (plain, STARTTLS, SSL, AUTH), a real
mbox file read back with :mod:`mailbox`, a fake ``sendmail`` process, a byte stream."""

from __future__ import annotations

import email
import email.policy
import io
import mailbox
import os
import shutil
import ssl
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.smtp import AuthResult, LoginPassword

from deploybot.config.schema import NotifyConfig, SmtpConfig
from deploybot.notify.compose.email import compose_combined_email
from deploybot.notify.compose.envelope import Envelope
from deploybot.notify.deliver.smtp import to_crlf
from deploybot.notify.deliver.transport import make_transport
from deploybot.support.errors import ConfigError, NotifyError
from tests.servers import Collector, LocalController, smtp_server

LIST = "commits@example.org"
NEW = "202b30a45f2d83f44e07227e2523030d199c298c"
OLD = "07f0cb6d9bb54e7c8b3f4a2f7a6ddc5a0ef2c3b1"
LOG = f"""commit {NEW}
Author: tqchen <tqchen@example.org>
Date:   Tue Jul 14 09:12:04 2020 -0700

    Build at Tue Jul 14 09:12:04 PDT 2020
---
 atom.xml | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/atom.xml b/atom.xml
index 07f0cb6..7d0db87 100644
--- a/atom.xml
+++ b/atom.xml
@@ -1 +1 @@
-<updated>2020-07-13</updated>
+<updated>2020-07-14 – naïve ✓</updated>
"""


def sample_message(new: str = NEW, *, pusher: str = "tqchen", log: str = LOG) -> bytes:
    """A combined email for a fixed commit (any 40-hex ``new`` gives another Message-ID)."""
    envelope = Envelope(
        repo_name="site",
        repository_url="https://git.example.org/repos/site.git",
        refname="refs/heads/asf-site",
        pusher=pusher,
        sender="deploybot@example.org",
        to=(LIST,),
        host="bot.example.org",
        date=datetime(2020, 7, 14, 16, 12, 4, tzinfo=UTC),
    )
    return compose_combined_email(
        envelope=envelope,
        log_text=log.replace(NEW, new),
        old=OLD,
        new=new,
        subject_line="Build at Tue Jul 14 09:12:04 PDT 2020",
    )


# --- a real SMTP server --------------------------------------------------------------------


@pytest.fixture
def smtpd() -> Iterator[tuple[LocalController, Collector]]:
    with smtp_server() as running:
        yield running


@dataclass(frozen=True)
class Cert:
    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))


@pytest.fixture(scope="session")
def cert(tmp_path_factory: pytest.TempPathFactory) -> Cert:
    """A self-signed certificate for 127.0.0.1, made with the openssl CLI."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("neither the cryptography package nor the openssl CLI is available")
    folder = tmp_path_factory.mktemp("tls")
    out = Cert(folder / "cert.pem", folder / "key.pem")
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(out.key), "-out", str(out.cert), "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return out


def smtp_notify(port: int, **smtp: Any) -> NotifyConfig:
    return NotifyConfig(
        transport="smtp",
        to=(LIST,),
        sender="Deploy Bot <deploybot@example.org>",
        smtp=SmtpConfig(host="127.0.0.1", port=port, timeout=5.0, **smtp),
    )


def unfold(raw: bytes) -> bytes:
    return raw.replace(b"\r\n", b"\n")


# --- SMTP ----------------------------------------------------------------------------------


def test_smtp_delivers_the_exact_message(smtpd: tuple[LocalController, Collector]) -> None:
    controller, handler = smtpd
    message = sample_message()
    make_transport(smtp_notify(controller.port))(message)
    assert len(handler.messages) == 1
    got = handler.messages[0]
    assert got.mail_from == "deploybot@example.org"
    assert got.rcpt_tos == [LIST]
    assert "BODY=8BITMIME" in got.mail_options
    assert unfold(got.content) == message  # byte for byte, 8-bit body included
    msg = email.message_from_bytes(unfold(got.content), policy=email.policy.default)
    assert msg["Subject"] == "[site] branch asf-site updated: Build at Tue Jul 14 09:12:04 PDT 2020"
    assert msg["X-Git-Refname"] == "refs/heads/asf-site"
    assert msg["X-Git-Oldrev"] == OLD
    assert msg["X-Git-Newrev"] == msg["X-Git-Rev"] == NEW
    assert msg["X-Git-NotificationType"] == "ref_changed_plus_diff"
    assert "+<updated>2020-07-14 – naïve ✓</updated>\n" in msg.get_content()


def test_smtp_dot_lines_and_crlf_survive(smtpd: tuple[LocalController, Collector]) -> None:
    controller, handler = smtpd
    log = LOG.replace("+<updated>", ".\n..\n+<updated>").replace("-<updated>", "-a\r\n-<updated>")
    message = sample_message(log=log)
    make_transport(smtp_notify(controller.port))(message)
    body = unfold(handler.messages[0].content).split(b"\n\n", 1)[1]
    assert b"\n.\n..\n+<updated>" in body  # dot-stuffed on the wire, unstuffed by the server
    assert b"\n-a\n-<updated>" in body  # a CRLF line of the diff is one line, not two


def test_smtp_starttls(smtpd: tuple[LocalController, Collector], cert: Cert) -> None:
    handler = Collector()
    controller = LocalController(handler, tls_context=cert.server_context(), require_starttls=True)
    controller.start()
    try:
        notify = smtp_notify(controller.port, security="starttls")
        make_transport(notify, ssl_context=cert.client_context())(sample_message())
        with pytest.raises(NotifyError, match=r"^SMTP 127\.0\.0\.1:\d+: 530 "):
            make_transport(smtp_notify(controller.port))(sample_message())  # no STARTTLS
    finally:
        controller.stop()
    assert [m.tls for m in handler.messages] == [True]


def test_smtp_starttls_verifies_the_certificate(cert: Cert) -> None:
    handler = Collector()
    controller = LocalController(handler, tls_context=cert.server_context())
    controller.start()
    try:
        notify = smtp_notify(controller.port, security="starttls")
        with pytest.raises(NotifyError, match="CERTIFICATE_VERIFY_FAILED"):
            make_transport(notify)(sample_message())  # default context: self-signed refused
    finally:
        controller.stop()
    assert handler.messages == []


def test_smtp_starttls_not_offered(smtpd: tuple[LocalController, Collector]) -> None:
    controller, handler = smtpd
    notify = smtp_notify(controller.port, security="starttls")
    with pytest.raises(NotifyError, match="STARTTLS"):
        make_transport(notify)(sample_message())
    assert handler.messages == []


def test_smtp_ssl(cert: Cert) -> None:
    handler = Collector()
    controller = LocalController(handler, ssl_context=cert.server_context())
    controller.start()
    try:
        notify = smtp_notify(controller.port, security="ssl")
        make_transport(notify, ssl_context=cert.client_context())(sample_message())
    finally:
        controller.stop()
    assert len(handler.messages) == 1
    assert unfold(handler.messages[0].content) == sample_message()


def _auth_server(
    handler: Collector, logins: list[tuple[bytes, bytes]], cert: Cert
) -> LocalController:
    def authenticator(
        server: Any, session: Any, envelope: Any, mechanism: str, data: Any
    ) -> AuthResult:
        assert isinstance(data, LoginPassword)
        logins.append((data.login, data.password))
        return AuthResult(success=data.password == b"s3cret pw", handled=False)

    return LocalController(
        handler,
        authenticator=authenticator,
        auth_required=True,
        tls_context=cert.server_context(),
        require_starttls=True,
    )


def test_smtp_login_with_password_from_env(cert: Cert, monkeypatch: pytest.MonkeyPatch) -> None:
    handler, logins = Collector(), list[tuple[bytes, bytes]]()
    controller = _auth_server(handler, logins, cert)
    controller.start()
    try:
        notify = smtp_notify(
            controller.port, security="starttls", username="bot", password_env="TEST_SMTP_PW"
        )
        monkeypatch.setenv("TEST_SMTP_PW", "s3cret pw")
        send = make_transport(notify, ssl_context=cert.client_context())
        send(sample_message())
        monkeypatch.setenv("TEST_SMTP_PW", "wrong")
        send(sample_message())  # the password was read when the sender was made
        with pytest.raises(NotifyError, match=r": 535 "):
            make_transport(notify, ssl_context=cert.client_context())(sample_message())
        anonymous = smtp_notify(controller.port, security="starttls")
        with pytest.raises(NotifyError, match=r": 530 "):  # no login at all: refused
            make_transport(anonymous, ssl_context=cert.client_context())(sample_message())
    finally:
        controller.stop()
    # smtplib tries each offered mechanism (PLAIN, then LOGIN) before giving up
    assert logins[:2] == [(b"bot", b"s3cret pw")] * 2
    assert set(logins[2:]) == {(b"bot", b"wrong")}
    assert len(handler.messages) == 2


def test_smtp_missing_password_variable_is_a_config_error() -> None:
    notify = smtp_notify(25, username="bot", password_env="DEPLOYBOT_TEST_UNSET_PW")
    with pytest.raises(ConfigError, match=r"notify\.smtp\.password_env.*DEPLOYBOT_TEST_UNSET_PW"):
        make_transport(notify, environ={})
    with pytest.raises(ConfigError, match=r"notify\.smtp\.password_env"):
        make_transport(smtp_notify(25, username="bot"), environ={})


def test_smtp_server_down_is_a_one_line_notify_error() -> None:
    controller = LocalController(Collector())
    controller.start()
    port = controller.port
    controller.stop()
    with pytest.raises(NotifyError) as info:
        make_transport(smtp_notify(port))(sample_message())
    reason = str(info.value)
    assert reason.startswith(f"SMTP 127.0.0.1:{port}: ")
    assert "\n" not in reason
    assert info.value.exit_code == 75


def test_to_crlf() -> None:
    assert to_crlf(b"a\nb\r\nc\rd\n") == b"a\r\nb\r\nc\r\nd\r\n"


# --- mbox ----------------------------------------------------------------------------------


def test_mbox_two_builds_parse_back(tmp_path: Path) -> None:
    path = tmp_path / "mail" / "commits.mbox"
    notify = NotifyConfig(transport="mbox", to=(LIST,), mbox=path, sender="bot@example.org")
    send = make_transport(notify)
    first = sample_message(pusher="From Mars")  # a body line starting "From " must be escaped
    second = sample_message("1" * 40)
    send(first)
    send(second)
    box = mailbox.mbox(path, create=False)
    try:
        messages = list(box)
    finally:
        box.close()
    assert len(messages) == 2
    assert [m["X-Git-Rev"] for m in messages] == [NEW, "1" * 40]
    assert messages[0].get_from().startswith("bot@example.org ")
    body = messages[0].get_payload(decode=True)
    assert isinstance(body, bytes)
    assert b"\n>From Mars pushed a commit to branch asf-site\n" in body
    assert body.endswith(
        b"+<updated>2020-07-14 \xe2\x80\x93 na\xc3\xafve \xe2\x9c\x93</updated>\n\n"
    )
    assert not path.with_name("commits.mbox.lock").exists()  # the dot-lock is released


def test_mbox_unwritable_is_a_notify_error(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-file.mbox"
    folder.mkdir()  # a folder where the mbox file should be: fails even for root
    notify = NotifyConfig(transport="mbox", to=(LIST,), mbox=folder)
    with pytest.raises(NotifyError, match=r"^mbox .*not-a-file\.mbox: ") as info:
        make_transport(notify)(sample_message())
    assert "\n" not in str(info.value)


# --- sendmail ------------------------------------------------------------------------------


def fake_sendmail(folder: Path, status: int = 0) -> Path:
    """A ``sendmail`` script that records its argv and stdin, then exits with ``status``."""
    folder.mkdir(exist_ok=True)
    script = folder / "sendmail"
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > "{folder}/argv"\n'
        f'cat > "{folder}/stdin"\n'
        + (f'echo "sendmail: cannot deliver: queue full" >&2\nexit {status}\n' if status else "")
    )
    script.chmod(0o755)
    return folder


def test_sendmail_pipes_the_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = fake_sendmail(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    notify = NotifyConfig(transport="sendmail", to=(LIST,), sender="Bot <bot@example.org>")
    make_transport(notify)(sample_message())
    assert (folder / "argv").read_text().splitlines() == ["-oi", "-t", "-f", "bot@example.org"]
    assert (folder / "stdin").read_bytes() == sample_message()


def test_sendmail_failure_is_a_notify_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = fake_sendmail(tmp_path / "bin", status=75)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    notify = NotifyConfig(transport="sendmail", to=(LIST,))
    with pytest.raises(NotifyError, match=r"^sendmail exited with status 75: .*queue full$"):
        make_transport(notify)(sample_message())


# --- stdout and none -----------------------------------------------------------------------


def test_stdout_and_none() -> None:
    out = io.BytesIO()
    make_transport(NotifyConfig(transport="stdout"), stream=out)(sample_message())
    assert out.getvalue() == sample_message()
    make_transport(NotifyConfig(transport="none"))(sample_message())  # accepted, goes nowhere
    with pytest.raises(ConfigError, match=r"notify\.transport"):
        make_transport(NotifyConfig(transport="pigeon"))


# --- whole-call timeouts -------------------------------------------------------------------


def test_smtp_timeout_bounds_the_whole_exchange() -> None:
    """A server that never ends its EHLO reply (a byte every 0.3 s, so no single read waits
    longer than the timeout) fails the send after ``timeout`` s, not never."""
    from tests.servers import call_within, trickling_server

    with trickling_server(greeting=b"220 slow ESMTP\r\n", answer=b"250-slow", drip=b"w") as port:
        notify = replace(smtp_notify(port), smtp=SmtpConfig("127.0.0.1", port, timeout=1.0))
        error = call_within(10, lambda: make_transport(notify)(sample_message()))
    assert isinstance(error, NotifyError), error
    assert str(error) == f"SMTP 127.0.0.1:{port}: no complete answer within the 1 s timeout"


def test_smtp_timeout_bounds_a_slow_greeting() -> None:
    from tests.servers import call_within, trickling_server

    with trickling_server(answer=None, drip=b"2") as port:  # "222222...": never a whole line
        notify = replace(smtp_notify(port), smtp=SmtpConfig("127.0.0.1", port, timeout=1.0))
        error = call_within(10, lambda: make_transport(notify)(sample_message()))
    assert isinstance(error, NotifyError), error
    assert "within the 1 s timeout" in str(error)
