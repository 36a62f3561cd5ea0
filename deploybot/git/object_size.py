"""The size of a git object from its header, without inflating the object (``git cat-file -s``).

git stores an object either loose (``objects/xx/<38 hex>``: zlib of ``"<type> <size>\\0"`` and
the content; git's ``object-file.c``, ``unpack_loose_header``) or in a pack (git's
``Documentation/gitformat-pack.txt``): an entry starts with the type and the size in a
little-endian base-128 varint; a delta entry (``OFS_DELTA``, ``REF_DELTA``) holds the size of
the delta, and the object's own size is the second varint at the start of the inflated
delta (git's ``packfile.c``, ``get_size_from_delta``). Either way a few dozen bytes are read.
dulwich (>= 1.2) has no such call: its ``get_raw`` inflates the whole object.
"""

from __future__ import annotations

import os
import zlib
from typing import BinaryIO

from dulwich.objects import ObjectID
from dulwich.repo import Repo

_OFS_DELTA, _REF_DELTA = 6, 7
_CHUNK = 4096


def object_size(repo: Repo, hexsha: str) -> int:
    """Return the size in bytes of the content of object ``hexsha`` (40 hex) in ``repo``.

    Packs are looked in first, then the loose object; an object found neither way (an
    alternate object store), or whose header cannot be read, is read whole by dulwich (so
    a damaged object fails as reading it would). Raises ``KeyError`` when it is missing.
    """
    store = repo.object_store
    try:
        size = _header_size(store, hexsha)
    except (OSError, ValueError, zlib.error):
        size = None
    return len(store[ObjectID(hexsha.encode("ascii"))].as_raw_string()) if size is None else size


def _header_size(store: object, hexsha: str) -> int | None:
    for pack in getattr(store, "packs", ()):
        try:
            offset = pack.index.object_offset(hexsha.encode("ascii"))
        except KeyError:
            continue
        with open(pack.data.path, "rb") as f:
            return _packed_size(f, offset)
    path = os.path.join(getattr(store, "path", ""), hexsha[:2], hexsha[2:])
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return _loose_size(f)
    return None


def loose_kind(path: str) -> bytes:
    """The type (``b"blob"``, ``b"tree"``, ``b"commit"``, ``b"tag"``) of the loose object
    file ``path``, from its header (a few dozen bytes inflated, not the object).

    Raises:
        OSError: the file cannot be read.
        ValueError, zlib.error: its header is not a loose object's.
    """
    with open(path, "rb") as f:
        header, nul, _ = _inflate_prefix(f, 64).partition(b"\0")
    kind, space, size = header.partition(b" ")
    if not (nul and space and size.isdigit()):
        raise ValueError("malformed loose object header")
    return kind


def _loose_size(f: BinaryIO) -> int:
    header, nul, _ = _inflate_prefix(f, 64).partition(b"\0")
    _kind, space, size = header.partition(b" ")
    if not (nul and space and size.isdigit()):
        raise ValueError("malformed loose object header")
    return int(size)


def _packed_size(f: BinaryIO, offset: int) -> int:
    f.seek(offset)
    byte = _read_byte(f)
    kind, size, shift = (byte >> 4) & 7, byte & 0x0F, 4
    while byte & 0x80:
        byte = _read_byte(f)
        size |= (byte & 0x7F) << shift
        shift += 7
    if kind == _OFS_DELTA:
        while _read_byte(f) & 0x80:  # the base's offset, not needed here
            pass
    elif kind == _REF_DELTA:
        f.seek(20, os.SEEK_CUR)  # the base's SHA-1
    else:
        return size
    delta = _inflate_prefix(f, 32)
    _, at = _varint(delta, 0)  # the base's size
    result, _ = _varint(delta, at)
    return result


def _inflate_prefix(f: BinaryIO, length: int) -> bytes:
    inflate = zlib.decompressobj()
    out = b""
    while len(out) < length and not inflate.eof:
        chunk = inflate.unconsumed_tail or f.read(_CHUNK)
        if not chunk:
            break
        out += inflate.decompress(chunk, length - len(out))
    return out


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """Return the delta header varint at ``at`` (7 bits a byte, least significant first)
    and the offset after it."""
    value = shift = 0
    while True:
        if at >= len(data):
            raise ValueError("truncated delta header")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _read_byte(f: BinaryIO) -> int:
    byte = f.read(1)
    if not byte:
        raise ValueError("truncated pack entry")
    return byte[0]
