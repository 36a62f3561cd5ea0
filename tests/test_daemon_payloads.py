"""What a verified delivery says (deploybot.serve.payloads): events, refs, repositories."""

from __future__ import annotations

import json

import pytest

from deploybot.serve.payloads import (
    OTHER,
    PING,
    PUSH,
    PayloadError,
    delivery_id,
    names_repository,
    push_to,
    read_event,
    repository_key,
)
from tests.daemonproc import bitbucket_server, gitea, github, gitlab

SHA = "a" * 40


@pytest.mark.parametrize("payload", [github, gitea, gitlab, bitbucket_server])
def test_each_forges_push_to_the_branch_builds(payload: object) -> None:
    headers, body = payload(SHA)  # type: ignore[operator]
    event = read_event(headers, body)
    assert event.kind == PUSH
    update, why = push_to(event, "main")
    assert update is not None and update.after == SHA and why == ""
    assert push_to(event, "other")[0] is None


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (github(SHA, ref="refs/heads/dev"), "refs/heads/dev is not refs/heads/main"),
        (github(SHA, ref="refs/tags/v1"), "a tag (refs/tags/v1), not refs/heads/main"),
        (github(SHA, deleted=True), "refs/heads/main was deleted"),
        (gitlab("0" * 40), "refs/heads/main was deleted"),
        (bitbucket_server(SHA, kind="DELETE"), "refs/heads/main was deleted"),
        (bitbucket_server(SHA, ref="refs/tags/v2"), "a tag (refs/tags/v2), not refs/heads/main"),
    ],
)
def test_other_branches_tags_and_deletions_do_not_build(
    payload: tuple[dict[str, str], bytes], reason: str
) -> None:
    update, why = push_to(read_event(*payload), "main")
    assert update is None and why == reason


def test_bitbucket_cloud_push() -> None:
    body = json.dumps({
        "push": {"changes": [
            {"new": {"type": "branch", "name": "main", "target": {"hash": SHA}}, "old": None},
            {"new": None, "old": {"type": "branch", "name": "gone"}},
        ]},
        "repository": {"links": {"html": {"href": "https://bitbucket.org/team/site"}}},
    }).encode()  # fmt: skip
    event = read_event({"X-Event-Key": "repo:push", "Content-Type": "application/json"}, body)
    assert push_to(event, "main")[0].after == SHA  # type: ignore[union-attr]
    assert push_to(event, "gone") == (None, "refs/heads/gone was deleted")
    assert names_repository(event, "git@bitbucket.org:team/site.git")


def test_ping_other_events_and_bad_bodies() -> None:
    assert read_event({"X-GitHub-Event": "ping"}, b"{not parsed").kind == PING
    assert read_event({"X-Event-Key": "diagnostics:ping"}, b"").kind == PING
    assert read_event({"X-Gitlab-Event": "Merge Request Hook"}, b"{}").kind == OTHER
    json_push = {"X-GitHub-Event": "push", "Content-Type": "application/json"}
    for headers, body in [
        (json_push, b"{not json"),
        (json_push, b"[1, 2]"),
        (json_push, b"{}"),  # no ref
        (json_push, b"\xff"),
        (json_push, b"[" * 100_000),
        ({}, b"{}"),  # no event header
    ]:
        with pytest.raises(PayloadError):
            read_event(headers, body)


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/Owner/Site",
        "https://github.com/owner/site.git",
        "https://user:token@github.com/owner/site.git/",
        "git@github.com:owner/site.git",
        "ssh://git@github.com:22/owner/site.git",
        "git://github.com/owner/site.git",
        "http://github.com/owner/site",
    ],
)
def test_repository_urls_compare_in_every_form(url: str) -> None:
    assert repository_key(url) == "github.com/owner/site"


def test_different_repositories_and_local_paths() -> None:
    assert repository_key("https://github.com/owner/site2") != repository_key(
        "https://github.com/owner/site"
    )
    assert repository_key("https://gitlab.com/owner/site") != repository_key(
        "https://github.com/owner/site"
    )
    assert repository_key("file:///srv/git/site.git") == repository_key("/srv/git/site.git")
    assert repository_key("/srv/git/site.git") != repository_key("/srv/git/other.git")


def test_each_forges_repository_urls_name_the_source() -> None:
    assert names_repository(read_event(*github(SHA)), "git@github.com:o/site.git")
    assert names_repository(read_event(*gitea(SHA)), "https://gitea.example.org/o/site")
    assert names_repository(read_event(*gitlab(SHA)), "git@gitlab.example.org:g/site.git")
    event = read_event(*bitbucket_server(SHA))
    assert names_repository(event, "https://bitbucket.example.org/scm/web/site.git")
    assert names_repository(event, "ssh://git@bitbucket.example.org:7999/web/site.git")
    assert not names_repository(event, "https://bitbucket.example.org/scm/web/other.git")


def test_delivery_ids_per_forge() -> None:
    assert delivery_id({"X-GitHub-Delivery": "abc"}) == "x-github-delivery:abc"
    assert delivery_id({"X-Gitea-Delivery": "g"}) == "x-gitea-delivery:g"
    assert delivery_id({"X-Gitlab-Event-UUID": "u", "Idempotency-Key": "k"}) == "idempotency-key:k"
    assert delivery_id({"X-Request-Id": "r"}) == "x-request-id:r"
    assert delivery_id({"Content-Type": "x"}) is None


def _bitbucket_cloud(new_hash: object) -> tuple[dict[str, str], bytes]:
    body = {
        "push": {"changes": [{"new": {"type": "branch", "name": "main",
                                      "target": {"hash": new_hash}}, "old": None}]},
        "repository": {"links": {"html": {"href": "https://bitbucket.org/o/site"}}},
    }  # fmt: skip
    return {"X-Event-Key": "repo:push", "Content-Type": "application/json"}, json.dumps(
        body
    ).encode()


def _with(payload: tuple[dict[str, str], bytes], **fields: object) -> tuple[dict[str, str], bytes]:
    headers, body = payload
    return headers, json.dumps({**json.loads(body), **fields}).encode()


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        (github("--upload-pack=touch /tmp/pwned"), "after"),
        (github("a" * 39), "after"),
        (github("g" * 40), "after"),
        (github("a" * 41), "after"),
        (_with(github(SHA), after=12345), "after"),
        (_with(github(SHA), before="HEAD~1"), "before"),
        (gitlab("a" * 40 + "\n"), "after"),
        (bitbucket_server("--exec=x"), "toHash"),
        (_bitbucket_cloud("-oProxyCommand=x"), "hash"),
    ],
)
def test_a_commit_id_that_is_not_hex_is_refused(
    payload: tuple[dict[str, str], bytes], field: str
) -> None:
    """Only a commit id (40 hex, or 64 with SHA-256) is taken from a payload: it is echoed
    in answers and logs, and compared with what the build fetched."""
    with pytest.raises(PayloadError, match=f"'{field}' is not a commit id"):
        read_event(*payload)


def test_commit_ids_of_either_hash_are_read() -> None:
    sha256 = "b" * 64
    update, _ = push_to(read_event(*github(sha256)), "main")
    assert update is not None and update.after == sha256
    update, _ = push_to(read_event(*_with(github(SHA.upper()), before=None)), "main")
    assert update is not None and update.after == SHA
    update, _ = push_to(read_event(*_bitbucket_cloud(SHA)), "main")
    assert update is not None and update.after == SHA


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("https://git.example.org/o/site.git", "https://git.example.org:8443/o/site.git"),
        ("https://git.example.org:8443/o/site", "https://git.example.org:9443/o/site"),
        ("ssh://git@git.example.org/o/site.git", "ssh://git@git.example.org:2222/o/site.git"),
        ("git@git.example.org:o/site.git", "ssh://git@git.example.org:2222/o/site.git"),
        ("http://127.0.0.1:3000/o/site.git", "http://127.0.0.1:3001/o/site.git"),
    ],
)
def test_the_port_tells_two_repositories_at_one_path_apart(one: str, other: str) -> None:
    assert repository_key(one) != repository_key(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("https://Git.Example.org:443/o/site.git/", "https://git.example.org/o/site"),
        ("http://git.example.org:80/o/site", "http://git.example.org/o/site.git"),
        ("ssh://git@git.example.org:22/o/site.git", "git@git.example.org:o/site"),
        ("ssh://git@git.example.org:2222/o/site.git", "ssh://deploy@GIT.example.org:2222/o/site/"),
        ("https://git.example.org:8443/o/site.git", "https://u:t@git.example.org:8443/o/site"),
        ("https://[::1]:8443/o/site", "https://[::1]:8443/o/site.git"),
    ],
)
def test_default_ports_case_and_suffixes_do_not(one: str, other: str) -> None:
    assert repository_key(one) == repository_key(other)


@pytest.mark.parametrize(
    "url",
    [
        "https://[::1/o/site",  # urlsplit: Invalid IPv6 URL
        "https://git.example.org:99999/o/site",  # a port out of range
        "https://git.example.org:port/o/site",
        "https://git.example.org/o/\ud800",
        "\x00",
        "",
    ],
)
def test_a_payload_url_that_parses_as_nothing_names_no_repository(url: str) -> None:
    event = read_event(*github(SHA, repo_url=url))
    assert not names_repository(event, "https://git.example.org/o/site")


CONTENT_TYPE = "content type must be application/json (set it in the webhook's settings)"


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/xml", "multipart/form-data"]
)
def test_a_push_in_another_content_type_is_refused_saying_so(content_type: str | None) -> None:
    headers, body = github(SHA)
    del headers["Content-Type"]
    if content_type is not None:
        headers["Content-Type"] = content_type
    with pytest.raises(PayloadError) as refused:
        read_event(headers, body)
    assert str(refused.value) == CONTENT_TYPE


@pytest.mark.parametrize("content_type", ["application/json", "Application/JSON; charset=UTF-8"])
def test_json_in_any_spelling_of_its_content_type_is_read(content_type: str) -> None:
    headers, body = github(SHA)
    headers["Content-Type"] = content_type
    assert push_to(read_event(headers, body), "main")[0] is not None


def test_githubs_form_encoding_is_read_and_its_faults_are_not_echoed() -> None:
    from urllib.parse import urlencode

    headers, body = github(SHA)
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    form = urlencode({"payload": body.decode()}).encode()
    assert push_to(read_event(headers, form), "main")[0] is not None
    secret_body = b"hunter2-secret&&&=x&payloadz=" + b"y" * 1000
    for bad in (secret_body, b"", urlencode({"payload": "{not json hunter2"}).encode()):
        with pytest.raises(PayloadError) as refused:
            read_event(headers, bad)
        assert "hunter2" not in str(refused.value) and "yyy" not in str(refused.value)
        assert len(str(refused.value)) < 200
    with pytest.raises(PayloadError, match="no 'payload' field"):
        read_event(headers, secret_body)


_JSON_PUSH = {"X-GitHub-Event": "push", "Content-Type": "application/json"}
_FORM_PUSH = {"X-GitHub-Event": "push", "Content-Type": "application/x-www-form-urlencoded"}
_LONG = "a number in the payload is too long (over 4300 digits)"
_DEEP = "the payload nests arrays or objects too deeply"
_NOT_JSON = "the body is not a JSON payload: "


@pytest.mark.parametrize(
    ("headers", "body", "message"),
    [
        (_JSON_PUSH, b'{"n": ' + b"1" * 5000 + b"}", _LONG),
        (_JSON_PUSH, b'{"n": [-' + b"9" * 4301 + b"]}", _LONG),
        (_JSON_PUSH, b"[" * 100_000, _DEEP),
        (_JSON_PUSH, b'{"a": {"b": ' * 50_000, _DEEP),
        (_JSON_PUSH, b'{"ref": "x\xff"}', "the body is not UTF-8 text (at byte offset 10)"),
        (
            _JSON_PUSH,
            b"{not json",
            _NOT_JSON + "expecting property name enclosed in double quotes at line 1, column 2",
        ),
        (_JSON_PUSH, b"", _NOT_JSON + "expecting value at line 1, column 1"),
        (_JSON_PUSH, b"{}\n{}", _NOT_JSON + "extra data at line 2, column 1"),
        (_FORM_PUSH, b"&".join([b"a=1"] * 2000), "the form-encoded body has more than 100 fields"),
    ],
)
def test_a_body_that_does_not_parse_is_refused_in_plain_words(
    headers: dict[str, str], body: bytes, message: str
) -> None:
    """What the 400 says: no Python internals (sys.set_int_max_str_digits(), recursion
    depth, codec names) and no byte of the body."""
    with pytest.raises(PayloadError) as raised:
        read_event(headers, body)
    assert str(raised.value) == message


def test_numbers_within_the_limit_are_read() -> None:
    body = json.dumps({"ref": "refs/heads/main", "after": SHA, "n": int("9" * 4300)}).encode()
    assert read_event(_JSON_PUSH, body).kind == PUSH


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        (5, "the push payload's 'ref' is not a string (a number)"),
        (["refs/heads/main"], "the push payload's 'ref' is not a string (an array)"),
        (None, "the push payload has no 'ref'"),
    ],
)
def test_a_ref_that_is_not_a_string_says_so(ref: object, message: str) -> None:
    with pytest.raises(PayloadError) as caught:
        read_event(*_with(github(SHA), ref=ref))
    assert str(caught.value) == message
    headers, body = github(SHA)
    without = {k: v for k, v in json.loads(body).items() if k != "ref"}
    with pytest.raises(PayloadError, match=r"^the push payload has no 'ref'$"):
        read_event(headers, json.dumps(without).encode())
