"""The watch stage of branch previews: which source branches are previewed, and their tips.

A branch is previewed when its name matches one of ``preview.branches``, fnmatch globs
matched case-sensitively against the whole name (``feature/*`` matches ``feature/x`` and
``feature/x/y``: fnmatch's ``*`` crosses ``/``), and it is not ``source.branch``, which the
production build alone publishes.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from deploybot.git import repository
from deploybot.git.remote import Remote


def is_previewed(branch: str, globs: Sequence[str], production: str) -> bool:
    """Whether the source branch ``branch`` is previewed: it matches one of ``globs``
    (fnmatch, case-sensitive) and is not ``production`` (``source.branch``)."""
    return branch != production and any(fnmatchcase(branch, glob) for glob in globs)


def previewed_tips(remote: Remote, globs: Sequence[str], production: str) -> dict[str, str]:
    """``{branch: tip (40 hex)}`` of the source branches at ``remote`` that are previewed
    (:func:`is_previewed`): one ref advertisement (``git ls-remote --heads``), no objects.

    Raises:
        FetchError, ConfigError, SourceError: as :func:`deploybot.git.repository.branch_tips`.
    """
    if not globs:
        return {}
    tips = repository.branch_tips(remote)
    return {b: tip for b, tip in sorted(tips.items()) if is_previewed(b, globs, production)}
