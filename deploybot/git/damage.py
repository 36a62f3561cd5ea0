"""A git object missing from, or damaged in, a repository on disk: which exceptions say so,
and :func:`damaged_object`, which reads one into a :class:`DamagedObject`.

Apart from :mod:`deploybot.git.repository` (which re-exports all of it) so that a reader of
objects (the commit email's :mod:`deploybot.notify.gitlog`) can tell damage without importing
the transports (dulwich's client, its index and bundle code: a tenth of ``deploybot
notify``'s start). The exceptions are dulwich 1.2's (``dulwich/errors.py``, ``pack.py``,
``object_store.py``).
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dulwich.errors import ChecksumMismatch, FileFormatException, MissingCommitError
from dulwich.object_store import BaseObjectStore, DiskObjectStore
from dulwich.repo import Repo

from deploybot.git.tree import is_object_id
from deploybot.git.tree_check import DamageFound
from deploybot.support.errors import one_line

UNREADABLE_OBJECT_ERRORS: tuple[type[BaseException], ...] = (
    FileFormatException,
    ChecksumMismatch,
    zlib.error,
)
"""What dulwich raises reading an object file that is there but damaged: a header that is
no object's (``ObjectFormatException``, ``EmptyFileException``), data that does not
inflate (``zlib.error``), contents that do not hash to the id (``ChecksumMismatch``), a
``packed-refs`` line that is no ref (``PackedRefsException``)."""

STORE_DAMAGE_ERRORS: tuple[type[BaseException], ...] = (
    struct.error,
    AssertionError,
    OverflowError,
    ValueError,
    IndexError,
)
"""What dulwich's pack, index and ref readers also raise on a file truncated or overwritten
(dulwich 1.2: an index's fan-out table cut short, ``struct.error``; an offset or a count
past the end, ``OverflowError``, ``IndexError``, ``ValueError``; a ref file holding no
object id, an ``AssertionError`` in the pack lookup). Damage only when raised inside
dulwich's storage code (:data:`_STORAGE_MODULES`): elsewhere they are bugs, not damage."""

DAMAGE_ERRORS: tuple[type[BaseException], ...] = (
    KeyError,
    MissingCommitError,
    BufferError,
    *UNREADABLE_OBJECT_ERRORS,
    *STORE_DAMAGE_ERRORS,
)
"""Every exception :func:`damaged_object` may read: a missing object (dulwich's walker
raises ``MissingCommitError`` from the ``KeyError``), an unreadable one, or the
``BufferError`` dulwich raises closing a pack while the damage met reading it is still on
its way (its traceback holds views of the pack's memory map)."""

_STORAGE_MODULES = frozenset(
    f"dulwich.{name}" for name in ("pack", "object_store", "objects", "refs", "file", "repo")
)
_ID_LOCALS = ("hex_sha", "hexsha", "sha1", "sha", "name")  # dulwich's names for the id read


@dataclass(frozen=True)
class DamagedObject:
    """A git object a repository on disk should hold and does not, or holds damaged, or a
    file of its object store or refs that cannot be read.

    Attributes:
        sha: the object id (40 hex); None when the damage is not one object's (a pack's
            index or a ref file that cannot be read).
        folder: the repository's folder (absolute), None when not known.
        missing: True when the object is not there; False when it is there but cannot be
            read (:data:`UNREADABLE_OBJECT_ERRORS`, :data:`STORE_DAMAGE_ERRORS`).
        detail: what dulwich said, one line (for damage that is not one object's).
        received: True when the damage is in a pack a server was sending into the
            repository (:func:`_in_received_pack`), not in what the repository held.
    """

    sha: str | None
    folder: Path | None
    missing: bool
    detail: str = ""
    received: bool = False

    def message(self, holder: str | None = None, fallback: Path | str | None = None) -> str:
        """The one line saying so: ``git object <id> (<holder>) is missing from <folder>:
        the repository is damaged (check it with: git -C <folder> fsck)``, or ``... in
        <folder> cannot be read: ...``, or ``the git objects or refs in <folder> cannot be
        read (<detail>): ...``; ``(<holder>)`` (the file that held it) when given,
        ``fallback`` (made absolute) when the folder is not known."""
        where = self.folder or (_absolute(fallback) if fallback is not None else None)
        place = where or "a git repository"
        check = f"git -C {where} fsck" if where is not None else "git fsck"
        if self.sha is None:
            said = f" ({self.detail})" if self.detail else ""
            problem = f"the git objects or refs in {place} cannot be read{said}"
            return f"{problem}: the repository is damaged (check it with: {check})"
        what = f"git object {self.sha}" + (f" ({holder})" if holder else "")
        problem = f"is missing from {place}" if self.missing else f"in {place} cannot be read"
        return f"{what} {problem}: the repository is damaged (check it with: {check})"


def damaged_object(exc: BaseException) -> DamagedObject | None:
    """Read dulwich's exception for an object missing from a repository on disk (its
    ``KeyError`` naming the id) or unreadable there (:data:`UNREADABLE_OBJECT_ERRORS`,
    raised while an object store read the id, or :data:`STORE_DAMAGE_ERRORS` raised in
    dulwich's storage code); a ``BufferError`` is read as the damage it was raised over.

    Returns:
        The :class:`DamagedObject`, its folder the innermost repository or object store the
        traceback went through; None when ``exc`` is about no git object (a ``KeyError`` of
        another kind, a ``ValueError`` raised outside dulwich's storage code, ...).
    """
    if isinstance(exc, DamageFound):
        return DamagedObject(exc.sha, exc.folder, False, exc.detail)
    if isinstance(exc, (BufferError, MissingCommitError)):
        inner = exc.__cause__ if isinstance(exc, MissingCommitError) else exc.__context__
        return damaged_object(inner) if inner is not None else None
    if isinstance(exc, KeyError):
        key = exc.args[0] if exc.args else None
        sha = key.decode("ascii", "replace") if isinstance(key, bytes) else str(key)
        if not is_object_id(sha):
            return None
    elif isinstance(exc, UNREADABLE_OBJECT_ERRORS) or (
        isinstance(exc, STORE_DAMAGE_ERRORS) and _raised_in_storage(exc)
    ):
        sha = ""
    else:
        return None
    folder: Path | None = None
    reading: str | None = None  # the innermost pack or index file read
    traceback = exc.__traceback__
    while traceback is not None:
        owner = traceback.tb_frame.f_locals.get("self")
        filename = getattr(owner, "_filename", None)
        if isinstance(filename, (str, bytes, os.PathLike)):
            reading = os.path.basename(os.fsdecode(filename))
        if isinstance(owner, Repo):
            folder = _absolute(owner.path)
        elif isinstance(owner, DiskObjectStore):
            folder = _absolute(Path(owner.path).parent)  # objects/ of a bare repository
        if isinstance(owner, BaseObjectStore) and not isinstance(exc, KeyError):
            sha = _object_id_in(traceback.tb_frame.f_locals) or sha  # the innermost read
        traceback = traceback.tb_next
    said = one_line(exc)
    detail = f"{reading}: {said}" if reading else said
    received = not isinstance(exc, KeyError) and _in_received_pack(exc, reading)
    if sha:
        return DamagedObject(sha, folder, isinstance(exc, KeyError), detail, received)
    if folder is None:
        return None
    return DamagedObject(None, folder, False, detail, received)


_RECEIVING = frozenset({"add_thin_pack", "add_pack_data", "_complete_pack"})
"""dulwich's object store functions that store a pack a server sent (dulwich 1.2)."""


def _in_received_pack(exc: BaseException, reading: str | None) -> bool:
    """Whether ``exc`` was raised storing a pack a server sent (a traceback through
    :data:`_RECEIVING`) and not reading one the repository held: the file read, if any,
    is the pack being received (``tmp_pack_*``, dulwich's temporary name)."""
    traceback = exc.__traceback__
    receiving = False
    while traceback is not None:
        receiving = receiving or traceback.tb_frame.f_code.co_name in _RECEIVING
        traceback = traceback.tb_next
    return receiving and (reading is None or reading.startswith("tmp_pack_"))


def _raised_in_storage(exc: BaseException) -> bool:
    """Whether ``exc`` was raised in dulwich's storage code (its innermost frame in one of
    :data:`_STORAGE_MODULES`)."""
    traceback = exc.__traceback__
    if traceback is None:
        return False
    while traceback.tb_next is not None:
        traceback = traceback.tb_next
    return traceback.tb_frame.f_globals.get("__name__") in _STORAGE_MODULES


def _object_id_in(names: Mapping[str, object]) -> str | None:
    """The object id an object store's frame was reading (hex or binary), or None."""
    for name in _ID_LOCALS:
        value = names.get(name)
        if isinstance(value, bytes) and len(value) == 20:
            return value.hex()
        text = value.decode("ascii", "replace") if isinstance(value, bytes) else value
        if isinstance(text, str) and is_object_id(text):
            return text
    return None


def _absolute(path: Path | str) -> Path:
    """``path`` made absolute and normalised (``.`` and ``..`` resolved in the text, links
    kept): the folder a user can copy from a message into ``git -C``."""
    return Path(os.path.abspath(path))
