"""The second read of a source, without its YAML: a full build reads each source twice.

The first read (:meth:`~deploybot.render.engine.full.Engine.read_source`) finds what a path
is (kind, date, front matter) for the cache; the render reads it again for its body, which
the cache does not keep. Parsing the front matter and working out the URL again was a
fifth of a post's render. :class:`ReadMemo` keeps, per process, what the first read made
with its body left out, and a digest of the file: the second read, when the blob, the
promotion and the file's digest are those of the first read, splits the file at its front
matter (:func:`~deploybot.render.read.frontmatter.body_text`, no YAML) and puts the body
back. A read whose body is not the file's (a plugin's read hook changed it) is not kept,
and a source this process did not read (another render worker did) is read again in full,
so the result is always what reading the file gives.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable

from deploybot.render.model import Page, Post
from deploybot.render.read.frontmatter import body_text
from deploybot.render.read.site import SourceFile
from deploybot.render.read.source import SourceTree

Promotion = tuple[str, bool]  # a plugin's (permalink, copied): see registry.Promotion


def _digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


def _with_body(doc: Post | Page, body: str) -> Post | Page:
    return dataclasses.replace(doc, doc=dataclasses.replace(doc.doc, body=body))


def _holding(found: SourceFile, doc: Post | Page) -> SourceFile:
    """Return ``found`` with ``doc`` in place of its post (or page)."""
    if found.post is not None:
        assert isinstance(doc, Post)
        return dataclasses.replace(found, post=doc)
    assert isinstance(doc, Page)
    return dataclasses.replace(found, page=doc)


@dataclasses.dataclass
class ReadMemo:
    """What this process's first reads made, by source path, until the second read."""

    kept: dict[str, tuple[str, Promotion | None, SourceFile, bytes]] = dataclasses.field(
        default_factory=dict
    )
    bodies: dict[str, bytes] = dataclasses.field(default_factory=dict)
    """A digest of each kept body, until :meth:`body_key` takes it."""

    def body_key(self, path: str) -> bytes | None:
        """Return (and forget) the digest of the body of ``path`` as its first read kept
        it, ``None`` when not kept: documents with one body are best rendered by one
        process, whose Markdown then converts it once (:mod:`.parallel`)."""
        return self.bodies.pop(path, None)

    def remember(
        self, tree: SourceTree, path: str, blob: str, index: Promotion | None, found: SourceFile
    ) -> None:
        """Keep ``found``, the read of ``path`` in ``tree`` (blob id ``blob``, promoted by
        ``index``), without its body, when it is a post, document or page whose body is the
        file's (:func:`~deploybot.render.read.frontmatter.body_text`: no read hook changed
        it). Raises ``KeyError`` when ``tree`` no longer has ``path``."""
        doc = found.post if found.post is not None else found.page
        if doc is None:
            return
        data = tree.read(path)
        if body_text(data, path) != doc.doc.body:
            return
        bare = _with_body(doc, "")
        kept = _holding(found, bare)
        self.kept[path] = (blob, index, kept, _digest(data))
        self.bodies[path] = _digest(doc.doc.body.encode("utf-8", "surrogatepass"))

    def read_again(
        self,
        tree: SourceTree,
        path: str,
        blob: str,
        index: Promotion | None,
        load: Callable[[], SourceFile],
    ) -> SourceFile:
        """Return the read of ``path`` (blob id ``blob``, promoted by ``index``): the first
        read with the file's body put back when the file's bytes are the same, else
        ``load()``. Raises what ``load`` raises (``SourceError``)."""
        entry = self.kept.pop(path, None)
        if entry is None or entry[:2] != (blob, index):
            return load()
        _, _, found, digest = entry
        data = tree.read(path)
        if _digest(data) != digest:
            return load()
        doc = found.post if found.post is not None else found.page
        assert doc is not None
        body = _with_body(doc, body_text(data, path))
        return _holding(found, body)
