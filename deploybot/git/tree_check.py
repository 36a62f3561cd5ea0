"""Naming the entry of a tree object that cannot be parsed (for :mod:`deploybot.git.tree`).

A tree object is a list of ``<octal mode> SP <name> NUL <20-byte id>`` entries (git's
``tree-walk.c`` ``decode_tree_entry``). A name cannot hold a NUL byte, but a tree written
byte by byte can: the name then ends early, the next 20 bytes are taken for its id, and the
entry after it has no valid mode (``fsck``: ``badTree``). git refuses such a tree
(``upload-pack`` aborts: "possible repository corruption on the remote side"), dulwich
raises ``ObjectFormatException``; both are bad input in the source, not worth a retry.
Unless the object's bytes do not hash to its id: then the file was damaged on disk
(truncated, overwritten), which is no one's input: :class:`DamageFound`.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path

from dulwich.errors import FileFormatException, ObjectFormatException
from dulwich.objects import ObjectID
from dulwich.repo import Repo

from deploybot.git import path_rules
from deploybot.support.errors import SourceError

_OCTAL = frozenset(b"01234567")


class DamageFound(FileFormatException):
    """Damage a reader of ours found in a repository on disk (where dulwich raises nothing
    that says so): an object whose bytes do not hash to its id, a ref holding no object id.
    :func:`deploybot.git.repository.damaged_object` reads it as it reads dulwich's.

    Attributes:
        folder: the repository's folder (absolute).
        sha: the object's id (40 hex), None when the damage is not one object's.
        detail: what is wrong, one line.
    """

    def __init__(self, folder: Path, sha: str | None, detail: str) -> None:
        super().__init__(f"{folder}: {detail}")
        self.folder, self.sha, self.detail = folder, sha, detail


def damage_found(repo: Repo, sha: bytes) -> DamageFound:
    """The :class:`DamageFound` for the object ``sha`` (40 hex) of ``repo``, whose bytes do
    not hash to its id."""
    where = Path(os.path.abspath(repo.path))
    return DamageFound(where, sha.decode("ascii"), "its bytes do not hash to its id")


def malformed_tree(repo: Repo, tree_id: bytes, folder: bytes) -> SourceError | DamageFound:
    """Return the ``SourceError`` for the tree ``tree_id`` at ``folder`` (``b""`` or ending
    in ``/``) that cannot be parsed, naming the bad entry as far as its bytes can be read
    (``a\\x00b.txt``: a NUL byte in the name), else the folder; :class:`DamageFound` when
    the object's bytes do not hash to ``tree_id`` (damaged on disk, not written so)."""
    raw = _raw_tree(repo, tree_id)
    if len(tree_id) == 40 and hashlib.sha1(b"tree %d\0" % len(raw) + raw).digest() != bytes.fromhex(
        tree_id.decode("ascii")
    ):
        return damage_found(repo, tree_id)
    name, reason = bad_entry(raw)
    path = (folder + name).decode("utf-8", "surrogateescape").rstrip("/") or "(the root folder)"
    where = path_rules.shortened(path_rules.printable(path))
    return SourceError(f"refused path: a tree entry git cannot read ({reason})", where)


def _raw_tree(repo: Repo, tree_id: bytes) -> bytes:
    """The tree object's bytes: from a pack as dulwich keeps them, from a loose object file
    by hand (dulwich parses a loose object as it reads it)."""
    try:
        return bytes(repo.object_store.get_raw(ObjectID(tree_id))[1])
    except ObjectFormatException:
        pass
    except KeyError:
        return b""
    hexsha = tree_id.decode("ascii")
    loose = Path(repo.object_store.path) / hexsha[:2] / hexsha[2:]
    try:
        data = zlib.decompress(loose.read_bytes())
    except (OSError, zlib.error):
        return b""
    return data.partition(b"\0")[2]  # after the "tree <size>" header


def bad_entry(raw: bytes) -> tuple[bytes, str]:
    """Return ``(name as far as it can be read, why)`` of the first entry of the tree object
    ``raw`` that does not parse (``b""``: none can be named)."""
    pos, last = 0, None  # last: (name, offset of the NUL that ended it)
    while pos < len(raw):
        space = raw.find(b" ", pos)
        nul = raw.find(b"\0", space + 1) if space >= 0 else -1
        mode = raw[pos:space] if space >= 0 else b""
        if not mode or not set(mode) <= _OCTAL or nul < 0 or nul + 21 > len(raw):
            if last is None:
                return raw[space + 1 : nul] if space >= 0 and nul > space else b"", "no mode"
            name, end = last
            stop = raw.find(b"\0", end + 1)
            rest = raw[end + 1 : stop if stop >= 0 else len(raw)]
            return name + b"\0" + rest, "a NUL byte in a name"
        last = (raw[space + 1 : nul], nul)
        pos = nul + 21
    return b"", "not a tree"
