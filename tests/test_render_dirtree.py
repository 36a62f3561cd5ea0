"""A DirTree reads each file of a build from disk about once: what its listing saw of
symlinks, the blob ids and the last few small files read are kept
(deploybot.render.read.source.DirTree), and the build is the same as from memory."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from deploybot.render.engine.incremental import build_into, open_cache
from deploybot.render.model import RenderOptions
from deploybot.render.outputs.sinks import MemorySink
from deploybot.render.read import source
from deploybot.render.read.source import DirTree, MemoryTree, git_blob_id

OPTIONS = RenderOptions(timezone="UTC", build_time=datetime(2022, 1, 1, tzinfo=UTC), jobs=1)
LAYOUT = b"<html><body>\n{{ content }}\n</body></html>\n"


def _files(posts: int) -> dict[str, bytes]:
    files = {"_config.yml": b"title: T\n", "_layouts/default.html": LAYOUT}
    for i in range(posts):
        post = f"---\nlayout: default\n---\n*{i}*\n"
        files[f"_posts/2021-01-{i + 1:02d}-p{i}.md"] = post.encode()
    return files


def test_a_build_walks_to_each_file_a_few_times_and_equals_the_memory_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _files(20)
    for path, data in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    (tmp_path / "link.md").symlink_to("_config.yml")
    walks: list[str] = []
    walk = source.DirTree._at

    def counted(self: DirTree, path: str, action: object) -> object:
        walks.append(path)
        return walk(self, path, action)  # type: ignore[arg-type]

    monkeypatch.setattr(source.DirTree, "_at", counted)
    on_disk = MemorySink()
    build_into(DirTree(tmp_path), OPTIONS, open_cache(None), on_disk, None)
    posts = [p for p in walks if p.startswith("_posts/")]
    assert len(posts) <= 4 * 20  # listing's read, then the render's size and read
    assert walks.count("_layouts/default.html") <= 4  # not once a post
    in_memory = MemorySink()
    tree = MemoryTree({**files, "link.md": b"_config.yml"}, symlinks=["link.md"])
    build_into(tree, OPTIONS, open_cache(None), in_memory, None)
    assert on_disk.files == in_memory.files


def test_blob_ids_symlinks_and_sizes_are_the_trees(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"a" * 10)
    (tmp_path / "big.bin").write_bytes(b"b" * (300 << 10))  # past the kept size: not kept
    (tmp_path / "l").symlink_to("a.txt")
    tree = DirTree(tmp_path)
    assert list(tree.paths()) == ["a.txt", "big.bin", "l"]
    assert (tree.is_symlink("l"), tree.is_symlink("a.txt")) == (True, False)
    assert tree.read("l") == b"a.txt" and tree.size("l") == 5
    assert tree.blob_id("a.txt") == git_blob_id(b"a" * 10) and tree.size("a.txt") == 10
    assert tree.read("big.bin") == b"b" * (300 << 10) and tree.size("big.bin") == 300 << 10
    with pytest.raises(KeyError):
        tree.read("missing.txt")
