"""A commit's message and subject as git prints them: a leaf of :mod:`deploybot.notify.gitlog`.

Apart from the log and diff code so that what needs only a subject (the build journal's
line for each run, the status pages) does not import them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dulwich.objects import Commit


def commit_message(commit: Commit) -> str:
    """Return ``commit``'s message decoded with its ``encoding`` header (default UTF-8),
    invalid bytes (or an unknown encoding name, then read as UTF-8) replaced by U+FFFD."""
    encoding = (commit.encoding or b"utf-8").decode("ascii", "replace")
    raw: bytes = commit.message
    try:
        return raw.decode(encoding, "replace")
    except LookupError:
        return raw.decode("utf-8", "replace")


def commit_subject(message: str) -> str:
    """Return the subject of a commit message the way ``git log --format=%s`` prints it.

    git's ``pretty.c`` (``format_subject``): skip leading blank lines, then join the lines of
    the first paragraph with one space, each stripped of trailing whitespace; a line that is
    empty or only whitespace ends the paragraph.
    """
    lines = message.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    parts: list[str] = []
    for line in lines:
        if not line.strip():
            break
        parts.append(line.rstrip())
    return " ".join(parts)


def read_commit_subject(repo_path: Path, commit: str) -> str:
    """Return commit ``commit``'s subject as ``git log --format=%s`` prints it (dulwich read).

    The message is decoded with the commit's ``encoding`` header (default UTF-8), invalid
    bytes replaced by U+FFFD.

    Raises:
        KeyError: no such commit, or the object is not a commit.
    """
    from dulwich.objects import Commit
    from dulwich.repo import Repo

    with Repo(str(repo_path)) as repo:
        obj = repo[commit.encode("ascii")]
    if not isinstance(obj, Commit):
        raise KeyError(f"{commit} is not a commit")
    return commit_subject(commit_message(obj))
