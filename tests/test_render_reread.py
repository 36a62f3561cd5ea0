"""The render's second read of a source reuses the first (deploybot.render.engine.reread):
the same read as reading the file again, and a full read whenever the file or the body is
not the first read's."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from deploybot.render.engine.reread import ReadMemo
from deploybot.render.read.frontmatter import body_text, parse_front_matter
from deploybot.render.read.site import SourceFile, read_source_file
from deploybot.render.read.siteconfig import load_config
from deploybot.render.read.source import MemoryTree

NOW = datetime(2024, 6, 1, tzinfo=UTC)
FILES = {
    "_posts/2024-01-02-a.md": b"---\ntitle: A\ntags: [x, y]\n---\n\nBody *one*.\n",
    "_posts/2024-01-03-b.md": b"No front matter at all.\r\n",
    "about.md": b"---\r\npermalink: /about/\r\n---\r\nAbout\r\n",
    "open.md": b"---\ntitle: never closed\nbody\n",
}


@pytest.mark.parametrize("data", [*FILES.values(), b"---\n---\n", b"---\n...\n\n\ntext"])
def test_body_text_is_the_front_matter_body(data: bytes) -> None:
    front = parse_front_matter(data, "x.md")
    whole = data.decode("utf-8-sig").replace("\r\n", "\n")
    assert body_text(data, "x.md") == (whole if front is None else front.body)


def _read(tree: MemoryTree, path: str) -> SourceFile:
    return read_source_file(tree, path, load_config(tree), NOW)


@pytest.mark.parametrize("path", [p for p in FILES if p != "open.md"])
def test_the_second_read_is_the_files_read(path: str) -> None:
    tree = MemoryTree(FILES)
    memo = ReadMemo()
    memo.remember(tree, path, tree.blob_id(path), None, _read(tree, path))
    assert path in memo.kept

    def load() -> SourceFile:
        raise AssertionError("read again in full")

    again = memo.read_again(tree, path, tree.blob_id(path), None, load)
    assert again == _read(tree, path)
    assert path not in memo.kept  # taken: a third read parses the file


def test_a_changed_file_or_promotion_is_read_in_full() -> None:
    path = "_posts/2024-01-02-a.md"
    tree = MemoryTree(FILES)
    memo = ReadMemo()
    edited = MemoryTree({**FILES, path: FILES[path].replace(b"title: A", b"title: B")})
    for blob, index, now in (
        (tree.blob_id(path), None, edited),  # same blob id, other bytes: the digest tells
        (tree.blob_id(path), ("/x/", False), tree),
        ("0" * 40, None, tree),
    ):
        memo.remember(tree, path, tree.blob_id(path), None, _read(tree, path))
        loaded = _read(now, path)
        assert memo.read_again(now, path, blob, index, lambda f=loaded: f) is loaded


def test_a_body_a_hook_changed_is_not_kept() -> None:
    path = "_posts/2024-01-02-a.md"
    tree = MemoryTree(FILES)
    found = _read(tree, path)
    assert found.post is not None
    doc = found.post.doc
    changed = dataclasses.replace(
        found, post=dataclasses.replace(found.post, doc=dataclasses.replace(doc, body="x"))
    )
    memo = ReadMemo()
    memo.remember(tree, path, tree.blob_id(path), None, changed)
    assert not memo.kept
