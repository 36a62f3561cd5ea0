"""``deploybot serve`` says in its log, for each build, whether its email was sent: to whom
and how, or that it waits in the outbox and why. A real daemon, a real SMTP server on
127.0.0.1 (aiosmtpd), which is then stopped: the next build's email waits."""

from __future__ import annotations

from pathlib import Path

from tests.daemonproc import Daemon, GatedSite, daemon_table, github, wait_until
from tests.servers import Collector, LocalController

HOOK = "/webhook/deploybot"


def _smtp_site(tmp_path: Path, port: int) -> GatedSite:
    site = GatedSite(tmp_path, gated=False, extra=daemon_table())
    text = site.config.read_text().replace('transport = "mbox"', 'transport = "smtp"')
    smtp = f'[notify.smtp]\nhost = "127.0.0.1"\nport = {port}\ntimeout = 5\n'
    site.config.write_text(text + smtp)
    return site


def test_each_builds_log_line_says_whether_its_email_was_sent(tmp_path: Path) -> None:
    received = Collector()
    controller = LocalController(received)
    controller.start()
    try:
        site = _smtp_site(tmp_path, controller.port)
        with Daemon(site.config) as daemon:
            assert daemon.push(HOOK, github(site.commit(1))).status_code == 202
            sent = daemon.wait_log(r"site deploybot: published \w{12} from source")
            wait_until(lambda: daemon.idle("deploybot"))
            first_build = site.head()
            assert first_build is not None and len(received.messages) == 1
            controller.stop()  # the SMTP server goes away: the next email waits
            second = site.commit(2)
            assert daemon.push(HOOK, github(second)).status_code == 202
            waiting = daemon.wait_log(
                rf"site deploybot: published \w{{12}} from source {second[:12]}"
            )
    finally:
        if controller.loop.is_running():
            controller.stop()
    build = site.head()
    assert build is not None and build != first_build
    assert sent.endswith(f"; email for {first_build[:12]} sent to commits@example.org (smtp)"), sent
    assert f"; email for {build[:12]} waiting in the outbox: " in waiting, waiting
    assert "refused" in waiting.split("waiting in the outbox: ", 1)[1], waiting  # the reason
