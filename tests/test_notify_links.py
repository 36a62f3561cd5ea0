"""The email's "Broken links" section (:mod:`deploybot.notify.compose.links`): read from a build
record, placed after the intro and before the git log text, bounded."""

from __future__ import annotations

import json

from deploybot.notify.compose.email import compose_combined_email
from deploybot.notify.compose.links import BrokenLinks, broken_lines
from deploybot.notify.compose.series import compose_commit_email
from deploybot.record.note import BROKEN_LINKS, BROKEN_LINKS_FIRST
from tests.test_notify_email import ENVELOPE, SUBJECT, split

NEW = "abcdef0123456789abcdef0123456789abcdef01"
LOG = f"commit {NEW}\n\ndiff --git a/x b/x\nindex 12345678..9abcdef0 100644\n"
RECORD = {
    BROKEN_LINKS: "3",
    BROKEN_LINKS_FIRST: json.dumps([["a.html", "/gone/", 12], ["b/index.html", "x.png", None]]),
}


def test_the_section_lists_the_first_links_and_counts_the_rest() -> None:
    broken = BrokenLinks.from_record(RECORD)
    assert broken == BrokenLinks(3, (("a.html", "/gone/", 12), ("b/index.html", "x.png", None)))
    assert broken_lines(broken) == [
        "Broken links: 3 on the published pages, the first 2 (page:line: link):",
        "    a.html:12: /gone/",
        "    b/index.html: x.png",
        "    ... and 1 more",
        "",
    ]
    cut = broken_lines(broken, 30)
    assert cut[1] == "    a.html:12: /gone/" and cut[0].endswith(" [...]")


def test_no_broken_link_or_an_unreadable_record_gives_no_section() -> None:
    assert BrokenLinks.from_record({}) is None
    assert BrokenLinks.from_record({BROKEN_LINKS: "0"}) is None
    assert BrokenLinks.from_record({BROKEN_LINKS: "2", BROKEN_LINKS_FIRST: "[1, 2"}) is None
    assert BrokenLinks.from_record({BROKEN_LINKS: "x"}) is None
    assert broken_lines(None) == []


def test_the_section_sits_in_the_intro_before_the_commit_list() -> None:
    broken = BrokenLinks.from_record(RECORD)
    raw = compose_combined_email(
        envelope=ENVELOPE, log_text=LOG, old="1" * 40, new=NEW, subject_line=SUBJECT,
        broken=broken,
    )  # fmt: skip
    plain = compose_combined_email(
        envelope=ENVELOPE, log_text=LOG, old="1" * 40, new=NEW, subject_line=SUBJECT
    )
    body, before = split(raw)[1], split(plain)[1]
    start = body.index("Broken links: 3 on the published pages, the first 2 (page:line: link):")
    assert body[:start] == before[:start]
    assert body[start + 5 :] == before[start:]  # four lines and a blank one, nothing else moved
    assert body[start + 5].startswith("The following commit(s) were added")
    series = compose_commit_email(
        envelope=ENVELOPE, log_text=LOG, commit=NEW, num=1, tot=2, subject_line=SUBJECT,
        in_reply_to="<x@example.org>", broken=broken,
    )  # fmt: skip
    assert "    a.html:12: /gone/" in split(series)[1]
