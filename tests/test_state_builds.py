"""The build journal (``<state.dir>/builds.jsonl``): bounded, written whole and atomically, read
without the lock, a damaged line skipped; and the entries the pipeline writes: a published
build with its duration, files and log lines, a failure with its error, nothing for a run
that was up to date, and a repeated failure counted, not repeated."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pytest import MonkeyPatch

from deploybot.state import builds
from deploybot.support.capture import capture
from tests.gitrepo import commit_files
from tests.smallsite import SmallSite


def _entry(n: int, **more: object) -> builds.BuildEntry:
    values: dict[str, object] = {"started": 1000.0 + n, "seconds": 0.5, "result": "published"}
    return builds.BuildEntry(**{**values, **more})  # type: ignore[arg-type]


def test_entries_read_back_newest_first(tmp_path: Path) -> None:
    line = builds.LogLine(1001.25, "INFO", "source main at 0123")
    first = _entry(1, source_commit="a" * 40, source_subject="One <b>", log=(line,))
    builds.append(tmp_path, first)
    builds.append(tmp_path, _entry(2, result="failed", error="bad input"))
    newest, oldest = builds.read(tmp_path)
    assert (newest.result, newest.error) == ("failed", "bad input")
    assert oldest == first
    assert oldest.log == (line,)
    assert (tmp_path / builds.JOURNAL).stat().st_mode & 0o777 == 0o600


def test_the_journal_keeps_the_newest_entries(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    monkeypatch.setattr(builds, "KEEP", 20)
    for n in range(25):
        builds.append(tmp_path, _entry(n))
    kept = builds.read(tmp_path, 10_000)
    assert len(kept) == 20
    assert kept[0].started == 1024.0
    assert kept[-1].started == 1005.0


def test_the_journal_keeps_its_size_and_each_entry_its_log_bounded(
    tmp_path: Path, monkeypatch: MonkeyPatch
) -> None:
    noisy = [builds.LogLine(float(i), "WARNING", "w" * 5000) for i in range(1000)]
    lines, dropped = builds.bounded_log(noisy)
    assert len(lines) == builds.LOG_LINES and dropped == 1000 - builds.LOG_LINES
    assert lines[0].when == 0.0 and lines[-1].when == 999.0
    assert all(len(line.text) == builds.LINE_CHARS for line in lines)
    monkeypatch.setattr(builds, "MAX_BYTES", 400_000)  # five such entries
    for n in range(12):
        builds.append(tmp_path, _entry(n, log=lines, log_dropped=dropped))
    assert (tmp_path / builds.JOURNAL).stat().st_size <= 400_000
    kept = builds.read(tmp_path)
    assert kept[0].started == 1011.0 and len(kept) == 4
    assert kept[0].log == lines and kept[0].log_dropped == dropped
    # Each entry is longer than the first window read from the end: read() reads more.
    assert [e.started for e in builds.read(tmp_path, 2)] == [1011.0, 1010.0]


def test_a_failure_that_repeats_is_counted_in_one_entry(tmp_path: Path) -> None:
    for n in range(5):
        builds.append(tmp_path, _entry(n, result="failed", error="source down", seconds=1.0))
    builds.append(tmp_path, _entry(9, result="failed", error="another error"))
    other, repeated = builds.read(tmp_path)
    assert repeated.repeats == 5 and repeated.started == 1000.0 and repeated.ended == 1005.0
    assert other.repeats == 1


def test_a_damaged_line_and_a_left_temp_file_are_harmless(tmp_path: Path) -> None:
    builds.append(tmp_path, _entry(1))
    journal = tmp_path / builds.JOURNAL
    with open(journal, "a", encoding="utf-8") as f:  # a line of another version, then torn
        f.write(json.dumps({"result": "someday"}) + "\n" + '{"id": "x", "star')
    (tmp_path / f".{builds.JOURNAL}.{os.getpid() + 1}.tmp").write_text("half")
    assert [e.started for e in builds.read(tmp_path)] == [1001.0]
    builds.append(tmp_path, _entry(2))
    assert [e.started for e in builds.read(tmp_path)] == [1002.0, 1001.0]
    assert builds.read(tmp_path / "nowhere") == []


def test_the_pipeline_records_built_and_failed_runs_not_up_to_date_ones(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    code, out = site.run()
    assert code == 0, out
    assert site.run()[0] == 0  # up to date: no entry
    commit_files(site.source, {"_posts/2023-06-09-bad.md": b"---\ntitle: [x\n---\n"}, "Broken")
    assert site.run()[0] == 1
    failed, published = builds.read(site.state)
    assert published.result == "published"
    assert published.source_commit == site.first and published.source_subject == "Import"
    assert published.build_commit == site.head()
    assert published.changed_files is not None and published.changed_files > 0
    assert 0 < published.seconds < 60
    texts = [line.text for line in published.log]
    assert texts[0] == f"source main at {site.first[:12]}"
    assert failed.result == "failed" and failed.exit_code == 1
    assert failed.source_subject == "Broken"
    assert failed.error is not None and "_posts/2023-06-09-bad.md" in failed.error
    assert failed.log[-1].level == "ERROR" and failed.log[-1].text == failed.error


def test_capture_keeps_info_lines_and_prints_only_what_it_printed_before(capsys: object) -> None:
    import logging

    logger = logging.getLogger("deploybot.pipeline")
    root = logging.getLogger()
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    keep = Keep()
    root.addHandler(keep)
    before = root.level
    root.setLevel(logging.WARNING)
    try:
        with capture() as captured:
            logger.info("an info line %s", "token=x")
            logger.warning("a warning")
            logger.info("fetched https://bot:s3cret@git.example.org/site.git")
        logger.info("after")
    finally:
        root.removeHandler(keep)
        root.setLevel(before)
    assert [text for _, _, text in captured.lines] == [
        "an info line token=x",
        "a warning",
        "fetched https://git.example.org/site.git",  # the credentials redacted away
    ]
    assert seen == ["a warning"]
    assert logging.getLogger("deploybot").propagate is True


def test_overlapping_captures_put_the_logger_back_as_it_was() -> None:
    import logging

    logger = logging.getLogger("deploybot")
    before = (logger.level, logger.propagate, list(logger.handlers))
    outer = capture()
    first = outer.__enter__()
    logging.getLogger("deploybot.pipeline").info("one")
    with capture() as second:
        logging.getLogger("deploybot.pipeline").info("two")
    logging.getLogger("deploybot.pipeline").info("three")
    outer.__exit__(None, None, None)
    assert [t for _, _, t in first.lines] == ["one", "two", "three"]
    assert [t for _, _, t in second.lines] == ["two"]
    assert (logger.level, logger.propagate, list(logger.handlers)) == before
