"""A git object missing from, or unreadable in, the repository an email is made from: which
file held it, and the one line that says so.

The notify stage lets dulwich's exception for a damaged object travel up as it is (its
``KeyError`` for a missing one, :data:`deploybot.git.damage.UNREADABLE_OBJECT_ERRORS` for one
overwritten with garbage): the pipeline reads it (:func:`deploybot.git.damage.damaged_object`)
to delete a damaged mirror and fetch it again. On its way the blob reader notes which
file's contents it was reading (:func:`note_holder`, a PEP 678 note, so ``-v`` tracebacks
show it too); a command that cannot heal the repository turns the error into
:func:`damaged_repository_error`'s one line.
"""

from __future__ import annotations

from pathlib import Path

from deploybot.git import damage as git_damage
from deploybot.notify.gitlog.diffstat import path_name
from deploybot.support.errors import DamagedRepositoryError

_HOLDER = "held by the file: "


def note_holder(exc: BaseException, path: bytes) -> None:
    """Note on ``exc`` (a missing or unreadable blob) that the file ``path`` (a tree path)
    held it; the first note wins (the innermost reader knows best)."""
    if holder_of(exc) is None:
        exc.add_note(_HOLDER + path_name(path))


def holder_of(exc: BaseException) -> str | None:
    """The file :func:`note_holder` noted on ``exc`` (C-quoted as git prints it), or None."""
    for note in getattr(exc, "__notes__", ()):
        if isinstance(note, str) and note.startswith(_HOLDER):
            return note[len(_HOLDER) :]
    return None


def damaged_repository_error(exc: BaseException, repo_path: Path) -> DamagedRepositoryError | None:
    """The one-line error (exit 1) for dulwich's ``exc`` about a missing or unreadable
    object met reading ``repo_path``: ``git object <id> (<file>) is missing from
    <repository>: the repository is damaged (check it with: git -C <repository> fsck)``
    (or ``... in <repository> cannot be read: ...``), the repository being the innermost
    one the traceback went through (else ``repo_path``), as an absolute path, and
    ``(<file>)`` there when known (:meth:`deploybot.git.damage.DamagedObject.message`). None
    when ``exc`` is about no git object (a ``KeyError`` of another kind)."""
    damage = git_damage.damaged_object(exc)
    if damage is None:
        return None
    return DamagedRepositoryError(damage.message(holder_of(exc), fallback=repo_path))
