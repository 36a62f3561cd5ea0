"""What a verified webhook delivery says: which event, which refs moved, which repository.

Only pushes matter. Read per forge (event header first, then the payload's fields):

- GitHub, Gitea, Forgejo, Gogs (``X-GitHub-Event``/``X-Gitea-Event``/``X-Forgejo-Event``/
  ``X-Gogs-Event: push``): ``ref``, ``after``, ``deleted``; ``repository.clone_url``,
  ``ssh_url``, ``html_url``, ``git_url``. ``ping`` is answered. (GitHub "Webhook events and
  payloads"; Gitea's payloads are GitHub's shape.)
- GitLab (``X-Gitlab-Event: Push Hook``): ``ref``, ``after``; ``project.git_http_url``,
  ``git_ssh_url``, ``web_url``, ``repository.url``... (GitLab "Webhook events").
- Bitbucket Server/Data Center (``X-Event-Key: repo:refs_changed``): ``changes[]`` of
  ``refId``, ``toHash``, ``type`` (``DELETE`` for a deletion); ``repository.links.clone[]``
  and ``links.self[]``; ``diagnostics:ping`` is answered (Atlassian "Event payload").
- Bitbucket Cloud (``X-Event-Key: repo:push``): ``push.changes[]`` with ``new`` (null on a
  deletion) of ``type`` ``branch``; ``repository.links.html.href``.

Commit ids (``after``, ``before``, ``toHash``, ``fromHash``, ``hash``) must be 40 hex
digits (64 in a SHA-256 repository) or null: anything else is a PayloadError (400), since
the id is echoed in answers and logs and compared with what the build fetched.
A deletion is ``deleted: true``, an ``after`` of zeros, or the forge's own marker; a tag is a
ref outside ``refs/heads/``. Content is never taken from the payload: the build fetches the
branch (payloads cap their commit lists, and a force-push rewrites history).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from deploybot.config import checks
from deploybot.watch.preview import is_previewed

PUSH, PING, OTHER = "push", "ping", "other"
_GITHUB_LIKE = ("X-GitHub-Event", "X-Gitea-Event", "X-Forgejo-Event", "X-Gogs-Event")
_ZEROS = re.compile(r"^0+$")
_COMMIT_ID = re.compile(r"[0-9a-fA-F]{40}(?:[0-9a-fA-F]{24})?")
_URL_KEYS = (
    "clone_url", "ssh_url", "html_url", "git_url", "url", "git_http_url", "git_ssh_url",
    "web_url", "http_url", "ssh_url_to_repo", "homepage",
)  # fmt: skip
_FORM = "application/x-www-form-urlencoded"
_FORM_FIELDS = 100
CONTENT_TYPE_REFUSED = "content type must be application/json (set it in the webhook's settings)"
DELIVERY_HEADERS = (
    "X-GitHub-Delivery",
    "X-Forgejo-Delivery",
    "X-Gitea-Delivery",
    "X-Gogs-Delivery",
    "Idempotency-Key",
    "X-Gitlab-Event-UUID",
    "Webhook-Id",
    "X-Request-UUID",
    "X-Request-Id",
)
"""Headers carrying a delivery id, in the order looked for (research notes §3.6): the
same on a redelivery, so a replay can be told."""


class PayloadError(ValueError):
    """A signed body that is not a payload deploybot can read (answered 400)."""


@dataclass(frozen=True)
class RefUpdate:
    """One ref a push moved: ``ref`` (``refs/heads/main``), ``after`` (the new id, or
    None) and whether the push ``deleted`` it."""

    ref: str
    after: str | None
    deleted: bool


@dataclass(frozen=True)
class Event:
    """A delivery: ``kind`` (:data:`PUSH`, :data:`PING` or :data:`OTHER`), ``name`` (the
    event header's value, for messages), the ``updates`` of a push and the
    ``repositories`` (every URL the payload gives for the repository)."""

    kind: str
    name: str
    updates: tuple[RefUpdate, ...] = ()
    repositories: tuple[str, ...] = ()


def event_name(headers: Mapping[str, str]) -> tuple[str, str]:
    """``(forge, event name)`` from the event header: forge ``github`` (also Gitea,
    Forgejo, Gogs), ``gitlab``, ``bitbucket`` or ``unknown`` (then the name is "")."""
    for header in _GITHUB_LIKE:
        if header in headers:
            return "github", headers[header]
    if "X-Gitlab-Event" in headers:
        return "gitlab", headers["X-Gitlab-Event"]
    if "X-Event-Key" in headers:
        return "bitbucket", headers["X-Event-Key"]
    return "unknown", ""


def delivery_id(headers: Mapping[str, str]) -> str | None:
    """``<header>:<id>`` from the first of :data:`DELIVERY_HEADERS` present, or None. The
    id is cut at 200 characters, and what UTF-8 cannot encode (aiohttp gives a header's
    bytes that are no UTF-8 as lone surrogates) is written as ``\\udcff`` escapes: it is
    stored, logged and answered."""
    for header in DELIVERY_HEADERS:
        value = headers.get(header, "").strip()
        if value:
            value = value[:200].encode("utf-8", "backslashreplace").decode("utf-8")
            return f"{header.lower()}:{value}"
    return None


def read_event(headers: Mapping[str, str], body: bytes) -> Event:
    """Parse a verified delivery (JSON, or GitHub's form encoding ``payload=<json>``).

    Raises:
        PayloadError: an event header is missing, or a push's body is not such JSON.
    """
    forge, name = event_name(headers)
    if forge == "unknown":
        raise PayloadError("no event header (X-GitHub-Event, X-Gitea-Event, X-Gitlab-Event...)")
    lowered = name.strip().lower()
    if lowered in ("ping", "diagnostics:ping"):
        return Event(PING, name)
    if lowered not in ("push", "push hook", "repo:refs_changed", "repo:push"):
        return Event(OTHER, name)
    data = _json(headers, body)
    bitbucket = forge == "bitbucket"
    updates = tuple(_bitbucket_updates(data)) if bitbucket else (_simple_update(data),)
    return Event(PUSH, name, updates, tuple(_repository_urls(data)))


def _json(headers: Mapping[str, str], body: bytes) -> dict[str, Any]:
    """The payload object of a push's body: JSON (``Content-Type: application/json``,
    any parameters), or GitHub's (and Gitea's) form encoding, ``payload=<json>`` in an
    ``application/x-www-form-urlencoded`` body. No message quotes the body, nor speaks of
    Python (its codecs, recursion limit or integer digits limit): each says what is wrong
    with the body in its sender's terms.

    Raises:
        PayloadError: another content type (or none), a body that is no UTF-8, a form
            without ``payload`` or with too many fields, no JSON object.
    """
    media = headers.get("Content-Type", "").partition(";")[0].strip().lower()
    if media not in ("application/json", _FORM):
        raise PayloadError(CONTENT_TYPE_REFUSED)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(f"the body is not UTF-8 text (at byte offset {exc.start})") from None
    if media == _FORM:
        text = _form_payload(text)
    try:
        data = json.loads(text, parse_int=_payload_int)
    except json.JSONDecodeError as exc:  # its msg quotes no byte of the body
        message = exc.msg[:1].lower() + exc.msg[1:]
        where = f"at line {exc.lineno}, column {exc.colno}"
        raise PayloadError(f"the body is not a JSON payload: {message} {where}") from None
    except RecursionError:
        raise PayloadError("the payload nests arrays or objects too deeply") from None
    if not isinstance(data, dict):
        raise PayloadError("the payload is not a JSON object")
    return data


def _form_payload(text: str) -> str:
    """The ``payload`` field of a form-encoded body.

    Raises:
        PayloadError: more than :data:`_FORM_FIELDS` fields, or no ``payload``.
    """
    try:
        # Not strict_parsing: its error quotes the field, a piece of the body.
        fields = parse_qs(text, max_num_fields=_FORM_FIELDS)
    except ValueError:  # "Max number of fields exceeded", its only one
        raise PayloadError(f"the form-encoded body has more than {_FORM_FIELDS} fields") from None
    if not fields.get("payload"):
        raise PayloadError("the form-encoded body has no 'payload' field")
    return fields["payload"][0]


def _payload_int(digits: str) -> int:
    """A JSON integer as :func:`json.loads` reads it, refusing one longer than Python
    converts (``sys.get_int_max_str_digits()``, 4300 by default; 0: no limit).

    Raises:
        PayloadError: too many digits (Python's own ValueError tells how to raise its
            limit).
    """
    limit = sys.get_int_max_str_digits()
    if limit and len(digits) - digits.startswith("-") > limit:
        raise PayloadError(f"a number in the payload is too long (over {limit} digits)")
    return int(digits)


def _commit_id(value: Any, field: str) -> str | None:
    """``value`` as a commit id (lower-case hex), None when absent (null).

    Raises:
        PayloadError: not 40 or 64 hex digits.
    """
    if value is None:
        return None
    if not isinstance(value, str) or not _COMMIT_ID.fullmatch(value):
        raise PayloadError(f"'{field}' is not a commit id (40 or 64 hex digits)")
    return value.lower()


def _simple_update(data: dict[str, Any]) -> RefUpdate:
    """GitHub, Gitea, Forgejo and GitLab: one ref per push."""
    ref = data.get("ref")
    if ref is None:
        raise PayloadError("the push payload has no 'ref'")
    if not isinstance(ref, str):
        raise PayloadError(f"the push payload's 'ref' is not a string ({_json_type(ref)})")
    after = _commit_id(data.get("after"), "after")
    _commit_id(data.get("before"), "before")
    deleted = data.get("deleted") is True or (after is not None and bool(_ZEROS.match(after)))
    return RefUpdate(ref, None if deleted else after, deleted)


def _json_type(value: Any) -> str:
    """What JSON calls ``value``'s type, with its article: ``a number``, ``an object``…"""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    return "an array" if isinstance(value, list) else type(value).__name__


def _bitbucket_updates(data: dict[str, Any]) -> Iterator[RefUpdate]:
    """Bitbucket Server ``changes[]``, or Bitbucket Cloud ``push.changes[]``."""
    push = data.get("push")
    if isinstance(push, dict):  # Cloud
        for change in _list(push.get("changes")):
            new, old = change.get("new"), change.get("old")
            if isinstance(new, dict) and new.get("type") == "branch":
                target = new.get("target")
                after = _commit_id(target.get("hash"), "hash") if isinstance(target, dict) else None
                yield RefUpdate(f"refs/heads/{new.get('name')}", after, False)
            elif new is None and isinstance(old, dict) and old.get("type") == "branch":
                yield RefUpdate(f"refs/heads/{old.get('name')}", None, True)
        return
    for change in _list(data.get("changes")):
        ref = change.get("refId")
        if not isinstance(ref, str):
            continue
        after = _commit_id(change.get("toHash"), "toHash")
        _commit_id(change.get("fromHash"), "fromHash")
        deleted = change.get("type") == "DELETE" or bool(after and _ZEROS.match(after))
        yield RefUpdate(ref, None if deleted else after, deleted)


def _repository_urls(data: dict[str, Any]) -> Iterator[str]:
    """Every URL the payload names its repository by (each forge's fields)."""
    for table in ("repository", "project"):
        repo = data.get(table)
        if not isinstance(repo, dict):
            continue
        for key in _URL_KEYS:
            if isinstance(repo.get(key), str):
                yield repo[key]
        links = repo.get("links")
        if isinstance(links, dict):
            for kind in ("clone", "self", "html"):
                found = links.get(kind)
                for link in _list(found) or ([found] if isinstance(found, dict) else []):
                    if isinstance(link.get("href"), str):
                        yield link["href"]


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


_DEFAULT_PORTS = {"https": 443, "http": 80, "ssh": 22, "git+ssh": 22, "ssh+git": 22, "git": 9418}
"""The port a URL of each scheme means when it names none: the same repository either way."""


def repository_key(url: str) -> str | None:
    """A repository URL reduced to what names the repository, so a payload's URLs compare
    with ``source.url`` whatever the form: ``https://github.com/o/r``,
    ``https://u:t@github.com/o/r.git``, ``git@github.com:o/r.git``,
    ``ssh://git@github.com:22/o/r.git`` and ``git://github.com/o/r.git`` all give
    ``github.com/o/r``: host, port and path, lower-case (forges match owner and name
    without case), without user, scheme, ``.git`` and slashes at either end. The port is
    kept unless it is its scheme's default (443, 80, 22, 9418): ``https://h:8443/o/r``
    gives ``h:8443/o/r``, another repository than ``h/o/r`` (two forges on one host). An
    IPv6 host is written in brackets. Local paths and ``file://`` give ``file:`` + the
    git directory, as :func:`deploybot.config.checks.repository_key` resolves it (symlinks,
    a work tree's ``.git``, a linked worktree's main repository). None for a URL that
    parses as no repository (a port out of range or not a number, an unclosed ``[``, a
    NUL): it names none."""
    url = url.strip()
    if "\0" in url:
        return None
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://", url)
    if scheme and scheme.group(1).lower() == "file":
        return checks.repository_key(url)
    if scheme:
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:  # "Invalid IPv6 URL", "Port out of range 0-65535"...
            return None
        host, path = (parts.hostname or ""), parts.path
        if port == _DEFAULT_PORTS.get(scheme.group(1).lower()):
            port = None
    elif re.match(r"^(?:[^/@:]+@)?[^/:]+:", url):  # scp-like: a colon before any slash
        user_host, _, path = url.partition(":")
        host, port = user_host.rpartition("@")[2], None
    else:
        return checks.repository_key(url)
    if not host:
        return None
    host = f"[{host.lower()}]" if ":" in host else host.lower()
    path = path.strip("/").removesuffix(".git").strip("/")
    return f"{host}{'' if port is None else f':{port}'}/{path.lower()}"


def names_repository(event: Event, source_url: str) -> bool:
    """True when one of the payload's repository URLs names the repository at
    ``source_url`` (see :func:`repository_key`)."""
    wanted = repository_key(source_url)
    return wanted is not None and any(repository_key(url) == wanted for url in event.repositories)


def push_to(event: Event, branch: str) -> tuple[RefUpdate | None, str]:
    """The update of ``refs/heads/<branch>`` that should build, or None and why not (a
    push to another branch, a tag, the branch's deletion)."""
    refname = f"refs/heads/{branch}"
    for update in event.updates:
        if update.ref == refname:
            if update.deleted:
                return None, f"{refname} was deleted"
            return update, ""
    refs = ", ".join(u.ref for u in event.updates) or "no ref"
    if all(u.ref.startswith("refs/tags/") for u in event.updates) and event.updates:
        return None, f"a tag ({refs}), not {refname}"
    return None, f"{refs} is not {refname}"


def preview_push(
    event: Event, globs: tuple[str, ...], production: str
) -> tuple[RefUpdate | None, str]:
    """The first update of a push (or a deletion) of a branch previewed by ``globs``
    (``preview.branches``; never ``production``, :func:`deploybot.watch.preview.is_previewed`)
    and that branch's name; ``(None, "")`` when the push moved none."""
    for update in event.updates:
        if not update.ref.startswith("refs/heads/"):
            continue
        branch = update.ref.removeprefix("refs/heads/")
        if is_previewed(branch, globs, production):
            return update, branch
    return None, ""
