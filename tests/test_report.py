"""What the CLI prints about outbox entries."""

from __future__ import annotations

from deploybot.notify.deliver.outbox import describe_key

A, B = "a" * 40, "b" * 40


def test_describe_key() -> None:
    assert describe_key(A) == f"email for {A[:12]}"
    assert describe_key(f"{A}-{B}") == "summary email for aaaaaaa..bbbbbbb"
    assert describe_key(f"webhook-{B}") == f"webhook post for {B[:12]}"
