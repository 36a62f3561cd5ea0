"""The Jekyll plugins (``deploybot.render.liquid.plugins``): the registry, and each plugin's
output against real Jekyll 4.3.1 with the Debian plugin gems (fixtures
``tests/fixtures/jekyll/plugins_*``, compared as :mod:`tests.test_render_jekyll_fixtures`
compares)."""

from __future__ import annotations

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.liquid.plugins import registry
from deploybot.render.model import RenderOptions, SiteBuild
from deploybot.render.read.source import MemoryTree
from deploybot.support.errors import SourceError
from tests.test_render_jekyll_fixtures import built, expected, normalise


def same_as_jekyll(case: str) -> SiteBuild:
    theirs, ours = expected(case), built(case)
    assert sorted(ours.files) == sorted(theirs)
    for path, data in theirs.items():
        ours_text = ours.files[path].decode("utf-8", "replace")
        assert normalise(ours_text) == normalise(data.decode("utf-8", "replace")), path
    return ours


def build(files: dict[str, bytes]) -> SiteBuild:
    return build_site(MemoryTree(files), RenderOptions())


LAYOUT = {"_layouts/default.html": b"<head>{% seo %}</head>{{ content }}"}


# the registry


def test_the_registry_finds_every_plugin_module() -> None:
    names = set(registry.known())
    assert {"jekyll-seo-tag", "jekyll-paginate", "jekyll-toc"} <= names
    assert all(p.name == n for n, p in registry.known().items())


def test_plugins_and_gems_are_read_once_each_in_order() -> None:
    data = {"plugins": ["jekyll-seo-tag", "jekyll-feed"], "gems": ["jekyll-feed", "jemoji"]}
    assert registry.named(data) == ("jekyll-seo-tag", "jekyll-feed", "jemoji")
    assert registry.named({"plugins": "jekyll-seo-tag"}) == ("jekyll-seo-tag",)
    assert registry.named({}) == ()


def test_an_unknown_plugin_gets_one_warning_naming_it() -> None:
    config = b"title: T\nplugins:\n  - jekyll-seo-tag\n  - jekyll-nonesuch\n"
    site = build({"_config.yml": config, **LAYOUT, "index.md": b"---\nlayout: default\n---\nx"})
    notes = [(w.path, w.line, w.message) for w in site.warnings]
    assert notes == [
        (
            "_config.yml",
            2,
            "plugin jekyll-nonesuch is not supported by deploybot: its output is left out",
        )
    ]


def test_a_plugin_tag_needs_the_plugin_switched_on() -> None:
    """Jekyll stops at an unknown tag: ``{% seo %}`` without jekyll-seo-tag in plugins."""
    page = {"index.md": b"---\nlayout: default\n---\nx"}
    with pytest.raises(SourceError, match="seo"):
        build({"_config.yml": b"title: T\n", **LAYOUT, **page})
    site = build({"_config.yml": b"title: T\ngems: [jekyll-seo-tag]\n", **LAYOUT, **page})
    assert b"<title>T</title>" in site.files["index.html"]
    assert [(w.line, w.message) for w in site.warnings] == [(2, registry.GEMS_RENAMED)]


# jekyll-seo-tag


def test_seo_tag_writes_what_jekyll_seo_tag_writes() -> None:
    """Titles with the tagline or the site title, descriptions from the front matter, the
    excerpt or the site (Markdown, HTML stripped), ``site.data.authors``, an author
    mapping of type Organization, images as a URL and as a mapping (height, width, alt),
    ``canonical_url``, ``locale``, ``seo.type``/``seo.name``, ``last_modified_at``, a
    paginated index (``Page 2 of 2 for``, prev/next links), ``title=false``, Twitter,
    Facebook and webmaster settings, the JSON-LD object."""
    site = same_as_jekyll("plugins_seo")
    assert site.warnings == ()
    assert b"<title>Page 2 of 2 for Seo &amp; Sample" in site.files["page2/index.html"]


def test_seo_tag_on_a_bare_site() -> None:
    """No url (no canonical link), ``name`` for the title, ``twitter`` as a string,
    ``google_site_verification``, ``authors``, an image with only ``facebook``/``twitter``,
    ``seo.date_modified``/``seo.links``, ``title=FALSE`` in a page, ``lang``."""
    site = same_as_jekyll("plugins_seo_bare")
    assert b"canonical" not in site.files["index.html"]
