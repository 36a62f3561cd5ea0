"""Which file names and paths deploybot reads from a source tree or writes to an output.

One set of rules, used by every reader and writer as defence in depth: the source tree readers
(:class:`~deploybot.git.tree.GitTree` checks each tree entry name, ``DirTree`` each path), the
render stage's output planner (permalinks and every output path), the preview writer
(``deploybot build``) and the publish stage's tree writer. A refused name is bad input in the
source: :class:`~deploybot.support.errors.SourceError` (exit 1), naming the path.

The rules follow git's own, so a tree git refuses to check out is refused here too, and an
output tree never holds what git would refuse:

- git's ``read-cache.c`` ``verify_path``/``verify_dotfile``: no empty name, no ``.`` or
  ``..``, no ``.git`` in any letter case (git outlaws ``.GIT`` "out of an abundance of
  caution"); ``fsck.c``: no ``/`` inside one tree entry name (``has_full_path``);
- git's ``path.c`` ``is_ntfs_dotgit`` (``core.protectNTFS``, on by default): ``.git`` or its
  8.3 short name ``git~1`` followed only by spaces and periods (``.git.``, ``GIT~1 ``), also
  after a backslash, which NTFS reads as a folder separator;
- git's ``utf8.c`` ``is_hfs_dotgit`` (``core.protectHFS``): ``.git`` with code points HFS+
  ignores (zero-width joiners, direction marks, U+FEFF…) anywhere in it.

deploybot adds rules of its own: no control character (U+0000-U+001F, U+007F: NUL cannot
be in a path at all, and CR/LF would break the line-based manifest, email and logs); every
name is valid UTF-8 (paths decoded with ``surrogateescape`` keep undecodable bytes as lone
surrogates; output paths become URLs, which are UTF-8); and what a file system can hold: a
name of at most :data:`MAX_NAME_BYTES` bytes (Linux's ``NAME_MAX``; ext4, XFS, Btrfs, NTFS
and APFS allow no more), a path of at most :data:`MAX_PATH_BYTES` (``PATH_MAX``) and at most
:data:`MAX_DEPTH` folders deep (git's own ``core.maxTreeDepth`` is 2,048; no site needs more,
and every tree walk then stays well inside Python's stack). git's extra rules for symlinks
named ``.gitmodules`` do not apply: outputs are written as regular files only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from deploybot.support.errors import SourceError

# utf8.c next_hfs_char: "these code points are ignored completely" by HFS+.
_HFS_IGNORED = frozenset(
    "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"
)
_CONTROL = frozenset(chr(c) for c in (*range(0x20), 0x7F))
_SURROGATE_LO, _SURROGATE_HI = "\udc80", "\udcff"  # how surrogateescape keeps bytes 0x80-0xff
# Most names (dates, slugs) are printable ASCII without '/' or '\\' and start with neither
# '.' nor 'g'/'G' (.git, git~1): none of the rules below can refuse them.
_PLAIN = re.compile(r"[0-9A-FH-Za-fh-z_+=,@-][ -.0-\[\]-~]*\Z")


MAX_NAME_BYTES = 255
"""The longest file or folder name, in bytes of UTF-8 (``NAME_MAX``)."""
MAX_PATH_BYTES = 4095
"""The longest path, in bytes of UTF-8 (``PATH_MAX`` is 4,096 with the final NUL)."""
MAX_DEPTH = 256
"""The most names in one path (folders, then the file)."""


def _size(text: str) -> int:
    """The bytes of ``text`` on a file system: its UTF-8, each undecodable byte kept by
    ``surrogateescape`` (a lone surrogate) one byte again, not the 3 of the surrogate (which
    made a 254-byte name that is not UTF-8 "longer than 255 bytes")."""
    try:
        return len(text.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:  # another lone surrogate, which no byte stands for
        escaped = len(_ESCAPED_BYTE.findall(text))
        return len(text.encode("utf-8", "surrogatepass")) - 2 * escaped


_ESCAPED_BYTE = re.compile(f"[{_SURROGATE_LO}-{_SURROGATE_HI}]")


def name_problem(name: str) -> str | None:
    """Return why one file or folder name (a tree entry, a path component) is refused, or
    ``None`` when it is fine. ``name`` is ``str``; undecodable bytes are lone surrogates."""
    if len(name) > MAX_NAME_BYTES // 4 and _size(name) > MAX_NAME_BYTES:
        return f"a name longer than {MAX_NAME_BYTES} bytes"
    return None if _PLAIN.match(name) else _problem(name)


def _size_problem(path: str) -> str | None:
    """Why ``path`` is too long or too deep for a file system, or ``None``."""
    if path.count("/") >= MAX_DEPTH:
        return f"a path more than {MAX_DEPTH} folders deep"
    if len(path) > MAX_PATH_BYTES // 4 and _size(path) > MAX_PATH_BYTES:
        return f"a path longer than {MAX_PATH_BYTES} bytes"
    return None


def _problem(name: str) -> str | None:
    if not name:
        return "an empty name"
    if name in (".", ".."):
        return f"a {name!r} name"
    if "/" in name:
        return "a '/' inside one name"
    if any(c in _CONTROL for c in name):
        return "a control character in the name"
    if any(_SURROGATE_LO <= c <= _SURROGATE_HI for c in name):
        return "a name that is not UTF-8"
    if _is_dotgit(name):
        return "a name git reserves for its own folder ('.git' in some spelling)"
    return None


def path_problem(path: str) -> str | None:
    """Return why a relative POSIX path (``/``-separated) is refused, or ``None``: it must
    not start or end with ``/``, nor be longer or deeper than the file system limits
    (:data:`MAX_PATH_BYTES`, :data:`MAX_DEPTH`), and each component must pass
    :func:`name_problem`."""
    problem = _size_problem(path)
    if problem is not None:
        return problem
    for part in path.split("/"):
        problem = name_problem(part)
        if problem is not None:
            return problem
    return None


def check_path(path: str, what: str = "path") -> str:
    """Return ``path`` when :func:`path_problem` finds nothing wrong with it.

    Raises:
        SourceError: naming ``path`` (see :func:`printable`) and the rule it breaks, e.g.
            ``.git/config: refused path: a name git reserves ...``; ``what`` says which kind
            of path it is (``"path"``, ``"output path"``).
    """
    problem = path_problem(path)
    if problem is not None:
        raise SourceError(f"refused {what}: {problem}", shortened(printable(path)))
    return path


def check_name(name: str, folder: str = "") -> None:
    """Raise ``SourceError`` when the one entry ``name`` of ``folder`` (``""``: the root) is
    refused by :func:`name_problem`, or would make a path too long or too deep; the message
    names ``folder/name``."""
    path = f"{folder}/{name}" if folder else name
    problem = name_problem(name) or _size_problem(path)
    if problem is not None:
        raise SourceError(f"refused path: {problem}", shortened(printable(path)))


def shortened(path: str, keep: int = 200) -> str:
    """Return ``path`` for a message: whole when at most ``keep`` characters, else its start
    and end around ``…`` (a path can be 4 KB, or a tree 10,000 folders deep)."""
    if len(path) <= keep:
        return path
    return f"{path[: keep // 2]}…{path[-keep // 2 :]}"


def printable(path: str) -> str:
    """Return ``path`` for a one-line message: control characters as ``\\xNN`` (``\\n`` and
    the like stay visible) and bytes that are not UTF-8 as ``\\xNN`` of the raw byte."""
    out: list[str] = []
    for c in path:
        if c in _CONTROL or c == "\\":
            out.append("\\\\" if c == "\\" else f"\\x{ord(c):02x}")
        elif _SURROGATE_LO <= c <= _SURROGATE_HI:
            out.append(f"\\x{ord(c) - 0xDC00:02x}")
        else:
            out.append(c)
    return "".join(out)


def _is_dotgit(name: str) -> bool:
    # verify_path runs the NTFS check on the whole name and again after each backslash.
    if any(_is_ntfs_dotgit(part) for part in name.split("\\")):
        return True
    return _is_hfs_dotgit(name)


def _is_ntfs_dotgit(name: str) -> bool:
    """path.c is_ntfs_dotgit: ``.git`` or ``git~1`` (any case), then only spaces/periods."""
    head = name[:5]
    if not head.isascii():  # git folds ASCII letters only
        return False
    head = head.lower()
    if head.startswith(".git"):
        rest = name[4:]
    elif head == "git~1":
        rest = name[5:]
    else:
        return False
    return all(c in " ." for c in rest)


def _is_hfs_dotgit(name: str) -> bool:
    """utf8.c is_hfs_dotgit: ``.git`` (ASCII case-folded) once ignorable code points are
    dropped; nothing may follow."""
    if not name.startswith(".") and not (name and name[0] in _HFS_IGNORED):
        return False
    folded = "".join(c for c in name if c not in _HFS_IGNORED)
    return folded.isascii() and folded.lower() == ".git"


def is_kept(path: str, keep: Iterable[str]) -> bool:
    """Whether the output ``path`` is under a ``publish.keep`` prefix: a folder ``x/`` holds
    what starts with it; any other prefix is that path or a folder of it (``docs`` keeps
    ``docs`` and ``docs/a``, not ``docsy``). The publish stage keeps those files of the publish
    branch (:mod:`deploybot.publish.commit`), and the link check counts them as served
    (:mod:`deploybot.render.links.check`)."""
    for prefix in keep:
        if prefix.endswith("/"):
            if path.startswith(prefix):
                return True
        elif path == prefix or path.startswith(prefix + "/"):
            return True
    return False
