"""A git object missing from the repository an email is made from: which file held it, and
the one line that says so.

The notify stage lets dulwich's ``KeyError`` for a missing object travel up as it is: the
pipeline reads it (:func:`deploybot.gitutil.missing_object`) to delete a damaged mirror and
fetch it again. On its way the blob reader notes which file's contents it was reading
(:func:`note_holder`, a PEP 678 note, so ``-v`` tracebacks show it too); a command that
cannot heal the repository turns the error into :func:`missing_object_error`'s one line.
"""

from __future__ import annotations

from pathlib import Path

from deploybot import gitutil
from deploybot.errors import MissingObjectError
from deploybot.notify.diffstat import path_name

_HOLDER = "held by the file: "


def note_holder(exc: KeyError, path: bytes) -> None:
    """Note on ``exc`` (a missing blob) that the file ``path`` (a tree path) held it; the
    first note wins (the innermost reader knows best)."""
    if holder_of(exc) is None:
        exc.add_note(_HOLDER + path_name(path))


def holder_of(exc: BaseException) -> str | None:
    """The file :func:`note_holder` noted on ``exc`` (C-quoted as git prints it), or None."""
    for note in getattr(exc, "__notes__", ()):
        if isinstance(note, str) and note.startswith(_HOLDER):
            return note[len(_HOLDER) :]
    return None


def missing_object_error(exc: KeyError, repo_path: Path) -> MissingObjectError | None:
    """The one-line error for dulwich's missing-object ``exc`` met reading ``repo_path``:
    ``git object <id> (<file>) is missing from <repository>: the repository is damaged
    (check it with: git -C <repository> fsck)``, the repository being the innermost one the
    traceback went through (else ``repo_path``) and ``(<file>)`` there when known. None when
    ``exc`` is no missing object (a ``KeyError`` of another kind)."""
    missing = gitutil.missing_object(exc)
    if missing is None:
        return None
    sha, folder = missing
    where = folder or repo_path
    holder = holder_of(exc)
    what = f"git object {sha}" + (f" ({holder})" if holder else "")
    return MissingObjectError(
        f"{what} is missing from {where}: the repository is damaged "
        f"(check it with: git -C {where} fsck)"
    )
