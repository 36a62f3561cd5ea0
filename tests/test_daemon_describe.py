"""The daemon's and the workers' log line for a finished job (deploybot.serve.build_process)."""

from __future__ import annotations

from deploybot.config.schema import NotifyConfig
from deploybot.serve.build_process import describe, describe_mail

A, B = "a" * 40, "b" * 40
SMTP = NotifyConfig(transport="smtp", to=("one@example.org", "two@example.org"))


def test_each_message_says_sent_to_whom_or_why_it_waits() -> None:
    assert describe_mail([A], [], SMTP) == (
        "email for aaaaaaaaaaaa sent to one@example.org, two@example.org (smtp)"
    )
    assert describe_mail([f"{A}-{B}", A, B, "c" * 40], [], SMTP) == (
        "4 emails sent to one@example.org, two@example.org (smtp): summary email for "
        "aaaaaaa..bbbbbbb, email for aaaaaaaaaaaa, email for bbbbbbbbbbbb and 1 more"
    )
    waiting = [(A, "SMTP host:25: [Errno 111]\nConnection refused")] * 5
    assert describe_mail([f"webhook-{B}"], waiting, SMTP) == (
        "webhook post for bbbbbbbbbbbb sent; "
        + "email for aaaaaaaaaaaa waiting in the outbox: SMTP host:25: [Errno 111] "
        "Connection refused; " * 3 + "2 more waiting in the outbox"
    )


def test_a_build_without_email_says_so_and_nothing_else_says_nothing() -> None:
    none = NotifyConfig(transport="none")
    assert describe_mail([], [], none, published=True) == 'no email (notify.transport is "none")'
    assert describe_mail([], [], none) == ""
    assert describe_mail([], [], SMTP, published=True) == ""


def test_the_job_line_names_the_mail_or_else_what_waits() -> None:
    line = describe("published", 1.234, B, A, mail="email for aaaaaaaaaaaa sent to x (smtp)")
    assert line == (
        "published aaaaaaaaaaaa from source bbbbbbbbbbbb in 1.23 s; "
        "email for aaaaaaaaaaaa sent to x (smtp)"
    )
    assert describe("up-to-date", 0.5, B, None, waiting=2) == (
        "up to date (source bbbbbbbbbbbb) in 0.50 s; 2 message(s) wait in the outbox"
    )
