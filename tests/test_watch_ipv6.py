"""A remote named by an IPv6 literal (``http://[::1]:PORT/...``, RFC 3986's brackets):
fetched from and pushed to as any other. dulwich's URL parsing dropped the brackets
(``http://::1:PORT/``), so every run failed with exit 75."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import commit_files
from tests.gitservers import http_backend_app, ipv6_loopback, wsgi_server
from tests.smallsite import SmallSite

NO_IPV6 = ipv6_loopback()
pytestmark = pytest.mark.skipif(NO_IPV6 is not None, reason=NO_IPV6 or "")


def test_a_source_and_publish_repository_at_an_ipv6_literal(tmp_path: Path) -> None:
    site = SmallSite(tmp_path)
    with wsgi_server(http_backend_app(tmp_path), host="::1") as base:
        assert base.startswith("http://[::1]:")
        site.write_config(source_url=f"{base}/source.git", publish_url=f"{base}/publish.git")
        done = site.run_process()
        assert done.returncode == 0, done.stderr
        first = site.head()
        assert first is not None and site.emails() == [first]
        commit_files(site.source, {"b.md": b"B\n"}, "B", when=1_700_000_100)
        again = site.run_process()
        assert again.returncode == 0, again.stderr
    assert site.head() not in (None, first)
