"""Webhook signatures per forge (deploybot.serve.signatures), with GitHub's test vector."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from deploybot.serve.signatures import find_signature, sign

# "Validating webhook deliveries", GitHub Docs: this secret and payload give this header.
VECTOR_SECRET = "It's a Secret to Everybody"
VECTOR_BODY = b"Hello, World!"
VECTOR_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def test_githubs_documented_test_vector_verifies() -> None:
    signature = find_signature({"X-Hub-Signature-256": VECTOR_SIGNATURE})
    assert signature is not None and signature.verify(VECTOR_BODY, VECTOR_SECRET)
    assert sign(VECTOR_BODY, VECTOR_SECRET) == VECTOR_SIGNATURE


@pytest.mark.parametrize(
    "value",
    [
        VECTOR_SIGNATURE[:-1] + "f",  # one hex digit off
        VECTOR_SIGNATURE.removeprefix("sha256="),  # the prefix is required here
        "sha1=" + hashlib.sha1(VECTOR_BODY).hexdigest(),
        "sha256=",
        "",
        "sha256=ünïcode",
    ],
)
def test_a_wrong_github_signature_fails(value: str) -> None:
    signature = find_signature({"X-Hub-Signature-256": value})
    assert signature is not None and not signature.verify(VECTOR_BODY, VECTOR_SECRET)


def test_the_body_is_taken_byte_for_byte() -> None:
    signature = find_signature({"X-Hub-Signature-256": VECTOR_SIGNATURE})
    assert signature is not None
    assert not signature.verify(VECTOR_BODY + b"\n", VECTOR_SECRET)
    assert not signature.verify(VECTOR_BODY, VECTOR_SECRET + " ")


def test_upper_case_hex_verifies() -> None:
    signature = find_signature(
        {"X-Hub-Signature-256": VECTOR_SIGNATURE.upper().replace("SHA", "sha")}
    )
    assert signature is not None and signature.verify(VECTOR_BODY, VECTOR_SECRET)


@pytest.mark.parametrize("header", ["X-Gitea-Signature", "X-Forgejo-Signature", "X-Gogs-Signature"])
def test_gitea_and_forgejo_sign_with_bare_hex(header: str) -> None:
    hex_mac = hmac.new(b"s3cret", b"{}", hashlib.sha256).hexdigest()
    signature = find_signature({header: hex_mac})
    assert signature is not None and signature.header == header
    assert signature.verify(b"{}", "s3cret")
    assert not find_signature({header: "sha256=" + hex_mac}).verify(b"{}", "s3cret")  # type: ignore[union-attr]


def test_bitbucket_signs_x_hub_signature_with_sha256_and_sha1_is_refused() -> None:
    good = find_signature({"X-Hub-Signature": sign(b"{}", "s3cret")})
    assert good is not None and good.verify(b"{}", "s3cret")
    legacy = "sha1=" + hmac.new(b"s3cret", b"{}", hashlib.sha1).hexdigest()
    sha1 = find_signature({"X-Hub-Signature": legacy})
    assert sha1 is not None and not sha1.verify(b"{}", "s3cret")


def test_gitlab_token_is_the_secret_itself() -> None:
    token = find_signature({"X-Gitlab-Token": "s3cret"})
    assert token is not None and token.verify(b"anything", "s3cret")
    assert not find_signature({"X-Gitlab-Token": "s3cre"}).verify(b"x", "s3cret")  # type: ignore[union-attr]
    assert not find_signature({"X-Gitlab-Token": ""}).verify(b"x", "s3cret")  # type: ignore[union-attr]


def test_the_first_header_found_decides_and_none_is_none() -> None:
    both = {"X-Gitlab-Token": "s3cret", "X-Hub-Signature-256": "sha256=00"}
    assert find_signature(both).header == "X-Hub-Signature-256"  # type: ignore[union-attr]
    assert find_signature({"Content-Type": "application/json"}) is None
