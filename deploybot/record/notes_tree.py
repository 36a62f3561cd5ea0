"""Finding a build's note (:mod:`deploybot.record.note`) in the tree of a notes commit."""

from __future__ import annotations

import stat

from dulwich.objects import Blob
from dulwich.repo import Repo

from deploybot.git import repository
from deploybot.git import tree as gittree
from deploybot.record.note import SOURCE_COMMIT, note_fields


def note_path(commit: str) -> str:
    """Where a note on ``commit`` (40 hex) is written in the notes tree: ``ab/cdef...``, the
    fan-out git itself uses for many notes, so a new note rewrites two small trees, not one
    tree listing every build."""
    return f"{commit[:2]}/{commit[2:]}"


def find_note(repo: Repo, tree_id: str | None, commit: str) -> tuple[str, str] | None:
    """``(path, blob hex)`` of the note on ``commit`` in the notes tree ``tree_id``, or
    None. Looked up as git's ``notes.c`` does: the whole remaining id as a file, else its
    next two hex digits as a folder, level by level, so flat (``abcdef...``) and fanned-out
    (``ab/cdef...``, ``ab/cd/ef...``) trees read alike, in a few tree reads at any size.

    Raises:
        SourceError: a notes tree that cannot be parsed (:func:`deploybot.git.tree.read_tree`).
    """
    if tree_id is None:
        return None
    current: bytes = repository.oid(tree_id)
    prefix, rest = "", commit
    while True:
        entries = gittree.read_tree(repo, current)
        entry = entries.get(rest.encode("ascii"))
        if entry is not None and not stat.S_ISDIR(entry[0]):
            return prefix + rest, entry[1].decode("ascii")
        folder = entries.get(rest[:2].encode("ascii"))
        if len(rest) <= 2 or folder is None or not stat.S_ISDIR(folder[0]):
            return None
        current, prefix, rest = folder[1], f"{prefix}{rest[:2]}/", rest[2:]


def read_note(repo: Repo, notes_commit: str | None, head: str) -> str | None:
    """Return the text of the note on ``head``, or ``None`` when there is none
    (:func:`find_note` finds it)."""
    if notes_commit is None:
        return None
    found = find_note(repo, repository.commit_tree_id(repo, notes_commit), head)
    if found is None:
        return None
    blob = repo[repository.oid(found[1])]
    return blob.as_raw_string().decode("utf-8", "replace") if isinstance(blob, Blob) else None


def read_source_commit(repo: Repo, notes_commit: str | None, head: str) -> str | None:
    """Return the source commit the note on ``head`` names, or ``None`` when there is none."""
    value = note_fields(read_note(repo, notes_commit, head) or "").get(SOURCE_COMMIT, "")
    return value if repository.is_object_id(value) else None
