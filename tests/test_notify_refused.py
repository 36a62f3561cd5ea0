"""A permanent SMTP refusal (5xx for every recipient: ``550 no such user``) is not retried
forever: the email is filed in ``outbox/failed/``, the run says so once (one line naming the
recipient and the server's reply, exit 78: the address is configuration), and later runs
neither retry nor print it. ``deploybot outbox retry KEY`` sends it again (to the recipients
the config names then), ``deploybot outbox drop KEY`` removes it. A 4xx refusal (try again
later) still waits in the outbox with its backoff."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from deploybot.cli.commands import main
from tests.gitrepo import commit_files
from tests.servers import refusing_smtp_server
from tests.smallsite import SmallSite

BAD = "nobody@example.org"
GOOD = "commits@example.org"
BUSY = "busy@example.org"
NO_SUCH_USER = "550 5.1.1 no such user here"
REFUSED = {BAD: NO_SUCH_USER, BUSY: "450 4.2.1 mailbox busy"}


def smtp_site(tmp_path: Path, port: int, to: str) -> SmallSite:
    site = SmallSite(tmp_path)
    set_smtp(site, port, to)
    return site


def set_smtp(site: SmallSite, port: int, to: str) -> None:
    site.write_config(extra=f'[notify.smtp]\nhost = "127.0.0.1"\nport = {port}\ntimeout = 5\n')
    text = site.config.read_text().replace('transport = "mbox"', 'transport = "smtp"')
    site.config.write_text(text.replace(f'to = ["{GOOD}"]', f'to = ["{to}"]'))


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def failed_files(site: SmallSite) -> list[str]:
    folder = site.state / "outbox" / "failed"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_a_permanent_refusal_is_told_once_and_not_retried(tmp_path: Path) -> None:
    with refusing_smtp_server(REFUSED) as (controller, server):
        site = smtp_site(tmp_path, controller.port, BAD)
        code, out, err = cli("run-once", "-q", "--config", str(site.config))
        build = site.head() or ""
        assert code == 78, (out, err)
        assert out == ""
        [line] = err.splitlines()
        assert f"email for {build[:12]} refused" in line
        assert BAD in line and NO_SUCH_USER in line, line
        assert "notify.to" in line and str(site.config) in line, line
        assert failed_files(site) == [f"{build}.eml", f"{build}.json"]
        assert server.asked == [BAD]
        # the next runs: nothing retried, nothing printed, exit 0
        assert cli("run-once", "-q", "--config", str(site.config)) == (0, "", "")
        commit_files(site.source, {"_posts/2023-01-04-three.md": b"---\ntitle: 3\n---\nX\n"})
        code, out, err = cli("run-once", "-q", "--retry-now", "--config", str(site.config))
        assert code == 78 and (site.head() or "")[:12] in err  # the new build's own email
        assert cli("run-once", "-q", "--retry-now", "--config", str(site.config)) == (0, "", "")
        assert server.asked == [BAD, BAD]
        code, listing, _ = cli("outbox", "--config", str(site.config))
        assert code == 0
        assert f"{build}  email, refused, 1 attempt" in listing, listing
        assert NO_SUCH_USER in listing
        assert f"deploybot outbox retry {build[:12]} sends it again" in listing


def test_retry_sends_a_refused_email_to_the_recipients_configured_now(tmp_path: Path) -> None:
    with refusing_smtp_server(REFUSED) as (controller, server):
        site = smtp_site(tmp_path, controller.port, BAD)
        assert cli("run-once", "-q", "--config", str(site.config))[0] == 78
        build = site.head() or ""
        set_smtp(site, controller.port, GOOD)  # the address fixed in the config
        code, out, err = cli("outbox", "retry", build[:12], "--config", str(site.config))
        assert (code, err) == (0, ""), out
        assert f"sent {build}" in out
        [message] = server.messages
        assert message.rcpt_tos == [GOOD]
        assert f"X-Git-Rev: {build}".encode() in message.content
        assert failed_files(site) == []
        assert (site.state / "outbox" / "sent" / f"{build}.eml").is_file()
        assert cli("outbox", "--config", str(site.config))[1] == "outbox is empty\n"


def test_retry_refused_again_is_told_again(tmp_path: Path) -> None:
    with refusing_smtp_server(REFUSED) as (controller, server):
        site = smtp_site(tmp_path, controller.port, BAD)
        assert cli("run-once", "-q", "--config", str(site.config))[0] == 78
        build = site.head() or ""
        code, _out, err = cli("outbox", "retry", build, "--config", str(site.config))
        assert code == 78 and f"email for {build[:12]} refused, not retried" in err, err
        assert BAD in err and NO_SUCH_USER in err, err
        assert failed_files(site) == [f"{build}.eml", f"{build}.json"]
        assert server.asked == [BAD, BAD]


def test_drop_removes_a_waiting_email(tmp_path: Path) -> None:
    with refusing_smtp_server(REFUSED) as (controller, server):
        site = smtp_site(tmp_path, controller.port, BAD)
        assert cli("run-once", "-q", "--config", str(site.config))[0] == 78
        build = site.head() or ""
        # --config before the subcommand too, as for the listing
        assert cli("outbox", "--config", str(site.config), "drop", build) == (
            0, f"dropped email for {build[:12]}\n", ""
        )  # fmt: skip
        assert failed_files(site) == []
        assert (site.state / "outbox" / "dropped" / f"{build}.eml").is_file()
        assert cli("outbox", "--config", str(site.config))[1] == "outbox is empty\n"
        code, _out, err = cli("outbox", "drop", build, "--config", str(site.config))
        assert code == 2 and f"{build} is not waiting in the outbox" in err, err
        assert server.messages == []


def test_a_temporary_refusal_still_waits_with_its_backoff(tmp_path: Path) -> None:
    with refusing_smtp_server(REFUSED) as (controller, server):
        site = smtp_site(tmp_path, controller.port, BUSY)
        code, _out, err = cli("run-once", "-q", "--config", str(site.config))
        assert code == 75 and "kept in the outbox" in err and "450 4.2.1" in err, err
        assert failed_files(site) == []
        build = site.head() or ""
        assert (site.state / "outbox" / f"{build}.eml").is_file()
        status = json.loads((site.state / "outbox" / f"{build}.json").read_text())
        assert status["next_attempt"] > time.time()  # its backoff
        assert cli("run-once", "-q", "--config", str(site.config))[0] == 75
        assert server.asked == [BUSY]  # not asked again before its backoff ends


@pytest.mark.parametrize("also", [GOOD, BUSY])
def test_a_refusal_of_one_recipient_of_two_is_not_permanent(tmp_path: Path, also: str) -> None:
    """Accepted for the other recipient: delivered (a retry would send it twice there);
    refused by the other with a 4xx: it waits (that may heal), refused by neither for good."""
    with refusing_smtp_server(REFUSED) as (controller, server):
        site = smtp_site(tmp_path, controller.port, BAD)
        text = site.config.read_text()
        site.config.write_text(text.replace(f'to = ["{BAD}"]', f'to = ["{BAD}", "{also}"]'))
        code, _out, err = cli("run-once", "-q", "--config", str(site.config))
        assert failed_files(site) == []
        if also == GOOD:
            assert code == 0 and [m.rcpt_tos for m in server.messages] == [[GOOD]], err
        else:
            assert code == 75 and "kept in the outbox" in err, err


def test_drop_and_retry_need_a_key_naming_one_message(tmp_path: Path) -> None:
    """An empty or short key named every message (each key starts with ''): with one
    waiting, `outbox drop ""` dropped it. Now it is a usage error, as is a start of a key
    that several messages share, which lists them."""
    with refusing_smtp_server(REFUSED) as (controller, _server):
        site = smtp_site(tmp_path, controller.port, BAD)
        assert cli("run-once", "-q", "--config", str(site.config))[0] == 78
        build = site.head() or ""
        for command in ("drop", "retry"):
            code, _out, err = cli("outbox", "--config", str(site.config), command, "")
            assert (code, err.splitlines()[-1]) == (
                2, "deploybot: error: '': give at least 4 characters of a key (deploybot "
                "outbox lists them)",
            ), err  # fmt: skip
        twin = site.state / "outbox" / "failed" / f"{build[:4]}{'0' * 36}.eml"
        twin.write_bytes(b"Subject: x\n\nx\n")
        code, _out, err = cli("outbox", "--config", str(site.config), "drop", build[:4])
        keys = ", ".join(sorted([build, twin.stem]))
        assert (code, err.splitlines()[-1]) == (
            2, f"deploybot: error: {build[:4]} starts 2 keys: {keys}; give more of one"
        ), err  # fmt: skip
        assert (site.state / "outbox" / "failed" / f"{build}.eml").is_file()  # not dropped


def test_a_daemon_or_fleet_job_tells_the_refusal_in_its_log_line(tmp_path: Path) -> None:
    """The refusal is told once, by the run that meets it: under `deploybot serve` or a
    fleet worker that run is a job, whose result dropped it (the email lay in failed/
    unseen). Now the job's result counts it and its log line says it, as a warning."""
    import logging

    from deploybot.config.load import load_config
    from deploybot.serve.build_process import job_level, run_loaded_job

    with refusing_smtp_server(REFUSED) as (controller, _server):
        site = smtp_site(tmp_path, controller.port, BAD)
        result = run_loaded_job("build", load_config(site.config))
    build = site.head() or ""
    assert [key for key, _reason in result["emails_refused"]] == [build]
    assert (result["status"], result["emails_failed"]) == ("published", [])
    assert result["mail"].startswith(
        f"email for {build[:12]} refused, not retried (kept in the outbox's failed/): "
    ), result["mail"]
    assert NO_SUCH_USER in result["mail"] and f"check notify.to in {site.config}" in result["mail"]
    levels = [job_level(failed=f, refused=r) for f, r in ((True, 1), (False, 1), (False, 0))]
    assert levels == [logging.ERROR, logging.WARNING, logging.INFO]
