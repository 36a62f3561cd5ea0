"""The forges a commit status can be posted to: one :class:`Forge` entry per ``status.api``.

Each entry knows its API's shape and nothing else: data and pure functions, no network (the
channel that posts is :mod:`deploybot.notify.deliver.forge_status`). It lives with the config,
as :mod:`.queue` does for Redis, because the loader fills ``[status]``'s defaults from it (the
API base, the repository read off ``source.url``, the GitHub Pages URL) and the layers run one
way (``tests/test_layout.py``). A new forge is one entry in :data:`FORGES`.

Sources, each the forge's own API documentation:

- GitHub, "REST API endpoints for commit statuses", *Create a commit status*
  (https://docs.github.com/rest/commits/statuses#create-a-commit-status):
  ``POST /repos/{owner}/{repo}/statuses/{sha}`` with a JSON body ``state`` (``error``,
  ``failure``, ``pending``, ``success``), ``target_url``, ``description``, ``context``;
  headers ``Accept: application/vnd.github+json``, ``Authorization: Bearer <token>`` and
  ``X-GitHub-Api-Version: 2022-11-28``; 201 Created. A description over 140 characters is
  refused with 422 ("description is too long (maximum is 140 characters)"), so it is cut.
- Gitea and Forgejo, the Swagger ``repoCreateStatus`` operation (served at ``/api/swagger``;
  its body is ``CreateStatusOption``: ``context``, ``description``, ``state``,
  ``target_url``; the states ``pending``, ``success``, ``error``, ``failure``, ``warning``)
  at ``POST /api/v1/repos/{owner}/{repo}/statuses/{sha}``, and "API Usage"
  (https://docs.gitea.com/development/api-usage): ``Authorization: token <token>``.
- GitLab, "Commits API", *Set the pipeline status of a commit* (formerly *Post the build
  status to a commit*, https://docs.gitlab.com/ee/api/commits.html): ``POST
  /projects/:id/statuses/:sha`` under ``/api/v4``, ``id`` the numeric id or the URL-encoded
  path (``group%2Fproject``), ``state`` one of ``pending``, ``running``, ``success``,
  ``failed``, ``canceled``, ``name`` the context, ``ref``, ``target_url``, ``description``;
  the ``PRIVATE-TOKEN`` header ("REST API authentication"); parameters may be sent as JSON.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import quote, urlsplit


class BuildState(StrEnum):
    """What a build came to, as a commit status says it; each forge names these its way
    (:attr:`Forge.states`)."""

    PENDING = "pending"
    """The build of the commit started."""
    SUCCESS = "success"
    """Published, or nothing to publish (the published tree is already this build)."""
    FAILURE = "failure"
    """The source is at fault: bad input (exit 1) or the publish guard held the build."""
    ERROR = "error"
    """Not published for another reason: the network, the push, the configuration, a bug."""


@dataclass(frozen=True)
class CommitStatus:
    """One status, as the outbox keeps it (forge-neutral: the forge's request is made when
    it is sent, with the config of that moment). ``sha``: the source commit (40 hex);
    ``description``: one line, not yet cut to a forge's limit; ``target_url`` may be ""
    (none); ``branch``: the source branch (GitLab's ``ref``)."""

    sha: str
    state: BuildState
    description: str
    target_url: str
    context: str
    branch: str = ""

    def to_json(self) -> dict[str, str]:
        """The fields as JSON values (``state`` its value)."""
        return {
            "sha": self.sha,
            "state": self.state.value,
            "description": self.description,
            "target_url": self.target_url,
            "context": self.context,
            "branch": self.branch,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CommitStatus:
        """The status :meth:`to_json` wrote. Raises ValueError (or KeyError) when ``data``
        is not one."""
        sha = str(data["sha"])
        if not _SHA_RE.match(sha):
            raise ValueError(f"not a commit id: {sha!r}")
        return cls(
            sha, BuildState(data["state"]), str(data["description"]), str(data["target_url"]),
            str(data["context"]), str(data.get("branch", "")),
        )  # fmt: skip


_SHA_RE = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")  # SHA-1 or SHA-256 object ids
ELLIPSIS = "…"


def cut(text: str, most: int) -> str:
    """``text`` as one line of at most ``most`` characters (a longer one ends in ``…``)."""
    line = " ".join(text.split())
    return line if len(line) <= most else line[: most - 1].rstrip() + ELLIPSIS


@dataclass(frozen=True)
class Forge:
    """One forge's commit status API.

    ``default_url``: the API base of its public instance ("" when it has none: the key is
    then required); ``prefix``: the API's path, added to a ``status.url`` that does not end
    in it (``https://git.example.org`` -> ``https://git.example.org/api/v1``); ``states``:
    its name for each :class:`BuildState`; ``max_description``: the longest description it
    takes (characters); ``nested``: the repository may be ``group/sub/project`` (GitLab),
    else it is ``owner/name``; ``path``: the request path under the API base for
    ``(repository, sha)``; ``auth``: the header carrying the token; ``body``: the JSON body
    of a status (its description already cut); ``headers``: the others each request sends.
    """

    api: str
    title: str
    default_url: str
    prefix: str
    states: Mapping[BuildState, str]
    max_description: int
    nested: bool
    path: Callable[[str, str], str]
    auth: Callable[[str], dict[str, str]]
    body: Callable[[CommitStatus, str], dict[str, str]]
    headers: Mapping[str, str]

    def api_base(self, url: str) -> str:
        """``url`` (``status.url``, or "" for :attr:`default_url`) with the API's path."""
        base = (url or self.default_url).rstrip("/")
        if self.prefix and not base.endswith(self.prefix):
            base += self.prefix
        return base

    def request(
        self, status: CommitStatus, *, url: str, repository: str, token: str
    ) -> tuple[str, dict[str, str], dict[str, str]]:
        """``(URL, headers, JSON body)`` of the POST that sets ``status``."""
        headers = {**self.headers, **self.auth(token)}
        target = self.api_base(url) + self.path(repository, status.sha)
        description = cut(status.description, self.max_description)
        return target, headers, self.body(status, description)


def _owner_name_path(repository: str, sha: str) -> str:
    owner, name = repository.split("/")
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}/statuses/{sha}"


def _gitlab_path(repository: str, sha: str) -> str:
    return f"/projects/{quote(repository, safe='')}/statuses/{sha}"


def _github_body(status: CommitStatus, description: str) -> dict[str, str]:
    body = {
        "state": GITHUB.states[status.state],
        "description": description,
        "context": status.context,
    }
    if status.target_url:
        body["target_url"] = status.target_url
    return body


def _gitea_body(status: CommitStatus, description: str) -> dict[str, str]:
    body = _github_body(status, description)
    body["state"] = GITEA.states[status.state]
    return body


def _gitlab_body(status: CommitStatus, description: str) -> dict[str, str]:
    body = {
        "state": GITLAB.states[status.state],
        "name": status.context,
        "description": description,
    }
    if status.branch:
        body["ref"] = status.branch
    if status.target_url:
        body["target_url"] = status.target_url
    return body


_SAME = {state: state.value for state in BuildState}

GITHUB = Forge(
    api="github",
    title="GitHub",
    default_url="https://api.github.com",
    prefix="",  # GitHub Enterprise Server: https://HOST/api/v3, given whole
    states=_SAME,
    max_description=140,
    nested=False,
    path=_owner_name_path,
    auth=lambda token: {"Authorization": f"Bearer {token}"},
    body=_github_body,
    headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"},
)
GITEA = Forge(
    api="gitea",
    title="Gitea",
    default_url="",
    prefix="/api/v1",
    states=_SAME,
    # No limit documented (the column is TEXT); a commit list shows one line: 255 keeps it so.
    max_description=255,
    nested=False,
    path=_owner_name_path,
    auth=lambda token: {"Authorization": f"token {token}"},
    body=_gitea_body,
    headers={"Accept": "application/json"},
)
GITLAB = Forge(
    api="gitlab",
    title="GitLab",
    default_url="https://gitlab.com/api/v4",
    prefix="/api/v4",
    # "running": the pending status is posted as the build starts.
    states={
        BuildState.PENDING: "running",
        BuildState.SUCCESS: "success",
        BuildState.FAILURE: "failed",
        BuildState.ERROR: "failed",
    },
    max_description=255,  # no limit documented: kept to one line, as Gitea's
    nested=True,
    path=_gitlab_path,
    auth=lambda token: {"PRIVATE-TOKEN": token},
    body=_gitlab_body,
    headers={"Accept": "application/json"},
)

FORGES: Mapping[str, Forge] = {forge.api: forge for forge in (GITHUB, GITEA, GITLAB)}
"""Every forge, by ``status.api``."""


def repository_of(forge: Forge, source_url: str, api_url: str = "") -> str | None:
    """The repository a status names, read off the source's URL (``https://host/o/n.git``,
    ``ssh://git@host/o/n``, ``git@host:o/n.git``): ``owner/name`` (the last two parts of
    the path), or for a :attr:`Forge.nested` forge the whole path (``group/sub/project``),
    less the path of an instance served under a folder (``api_url``'s path before the API's
    own). None for a local path or a path too short to name one."""
    path = _url_path(source_url)
    if path is None:
        return None
    served_under = urlsplit(forge.api_base(api_url)).path.removesuffix(forge.prefix).strip("/")
    if served_under and path.startswith(served_under + "/"):
        path = path[len(served_under) + 1 :]
    parts = [part for part in path.split("/") if part]
    if len(parts) < 2:
        return None
    return "/".join(parts) if forge.nested else "/".join(parts[-2:])


_SCP_RE = re.compile(r"^(?:[^@/:]+@)?[^/:]+:(?!//)(.+)$")


def _url_path(url: str) -> str | None:
    """The repository path of a remote URL without ``.git`` and slashes at either end;
    None for a local path (or ``file://``)."""
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme.lower() == "file" or not parts.hostname:
            return None
        path = parts.path
    else:
        match = _SCP_RE.match(url)
        if match is None or url.startswith(("/", ".")):
            return None
        path = match.group(1)
    path = path.strip("/")
    return path.removesuffix(".git").strip("/") or None


def check_repository(forge: Forge, repository: str) -> str | None:
    """Why ``repository`` cannot name a repository on ``forge`` (a sentence), or None."""
    parts = repository.split("/")
    if any(not part or part.strip() != part or part in (".", "..") for part in parts):
        return "must be owner/name, with no empty part, space or '..'"
    if re.search(r"[\x00-\x20\x7f?#%]", repository):
        return "must hold no space, control character, '?', '#' or '%'"
    if forge.nested:
        if len(parts) == 1 and not parts[0].isdigit():
            return "must be the project's numeric id or its path, group/project"
        return None
    if len(parts) != 2:
        return "must be owner/name"
    return None


GITHUB_HOST = "github.com"
PAGES_BRANCH = "gh-pages"


def pages_url(forge: Forge, publish_url: str, branch: str) -> str:
    """The GitHub Pages URL of a ``gh-pages`` publish branch in a github.com repository
    (``https://OWNER.github.io/NAME/``; a user or organization site ``OWNER.github.io``:
    ``https://OWNER.github.io/``), the default target of a status; "" for anything else.
    A site with a custom domain (``CNAME``) sets ``status.target_url``."""
    host = urlsplit(publish_url).hostname if "://" in publish_url else None
    if host is None and _SCP_RE.match(publish_url) and not publish_url.startswith(("/", ".")):
        host = publish_url.split(":", 1)[0].rpartition("@")[2]
    path = _url_path(publish_url)
    if forge is not GITHUB or host != GITHUB_HOST or branch != PAGES_BRANCH or path is None:
        return ""
    parts = path.split("/")
    if len(parts) != 2:
        return ""
    owner, name = parts
    if name.lower() == f"{owner}.github.io".lower():
        return f"https://{name.lower()}/"
    return f"https://{owner.lower()}.github.io/{name}/"
