"""Renderer fidelity: kramdown extensions in the build, Jekyll's code conventions, options, and
the tvm-site corpus measured against the pages Jekyll published."""

from __future__ import annotations

import difflib
import html
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import pytest

from deploybot.config.load import load_config
from deploybot.config.schema import RenderConfig
from deploybot.pipeline.build_folder import build_to_folder
from deploybot.render.engine.build import build_site
from deploybot.render.markdown.renderer import make_markdown, markdown_to_html
from deploybot.render.model import RenderOptions, SiteBuild
from deploybot.render.read.source import DirTree, MemoryTree
from deploybot.render.theme.layouts import bundled_templates_dir
from deploybot.support.errors import ConfigError

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus" / "tvm-site"
PUBLISHED = [
    "2017/10/30/Bringing-AMDGPUs-to-TVM-Stack-and-NNVM-Compiler-with-ROCm.html",
    "2018/10/03/auto-opt-all.html",
    "2019/04/29/opt-cuda-quantized.html",
    "2020/07/14/bert-pytorch-tvm.html",
]
BUILD_TIME = datetime(2020, 7, 14, 16, 12, 2, tzinfo=UTC)
needs_corpus = pytest.mark.skipif(
    not CORPUS.is_dir(), reason=f"the tvm-site corpus is missing at {CORPUS}"
)


def md(text: str, **options: object) -> str:
    return markdown_to_html(text, make_markdown(**options))  # type: ignore[arg-type]


def post_html(body: str, **options: object) -> str:
    tree = MemoryTree({"_posts/2020-01-01-a.md": b"---\ntitle: A\n---\n" + body.encode()})
    build = build_site(tree, RenderOptions(**options))  # type: ignore[arg-type]
    page = build.files["2020/01/01/a.html"].decode()
    return page[page.index('<div class="post-content">') : page.rindex("</article>")]


def test_attribute_lists_land_on_the_element_they_follow() -> None:
    html_ = post_html(
        '{:center: style="text-align: center"}\n'
        '![plot](/images/plot.png){: width="35%"}\n{:center}\n\n'
        "[site](https://x.org){:target='_blank'}\n"
    )
    assert (
        '<p style="text-align: center"><img src="/images/plot.png" alt="plot" width="35%" /></p>'
    ) in html_
    assert '<a href="https://x.org" target="_blank">site</a>' in html_
    assert "{:" not in html_


def test_heading_ids_are_gfm_with_duplicate_suffixes() -> None:
    html_ = post_html("# 1. Graph Annotation\n\n## Results\n\n## Results\n\n## Results\n")
    assert '<h1 id="1-graph-annotation">' in html_
    assert all(f'<h2 id="results{s}">' in html_ for s in ("", "-1", "-2"))


def test_code_conventions() -> None:
    html_ = post_html("```\nplain\n```\n\nUse `x`.\n")
    assert '<div class="language-plaintext highlighter-rouge"><div class="highlight">' in html_
    assert '<code class="language-plaintext highlighter-rouge">x</code>' in html_


def test_bundled_theme_ships_a_pygments_stylesheet() -> None:
    css = (bundled_templates_dir() / "assets" / "css" / "style.css").read_text()
    assert ".highlight .k {" in css and ".highlight .s2 {" in css


def test_typography_on_and_off() -> None:
    assert post_html('"Hi" -- it\'s... `a--b`\n').count("“Hi” – it’s… ") == 1
    assert "a--b" in post_html('"Hi" -- it\'s... `a--b`\n')
    off = post_html('"Hi" -- it\'s...\n', typography=False)
    assert '<p>"Hi" -- it\'s...</p>' in off


def test_bare_quotes_in_text_as_kramdown_writes_them() -> None:
    assert md('Say "hi" & <b>go</b>\n', typography=False) == '<p>Say "hi" &amp; <b>go</b></p>\n'


@pytest.mark.parametrize(
    ("style", "ref", "notes"),
    [
        (
            "kramdown",
            '<sup id="fnref:ieee" role="doc-noteref"><a href="#fn:ieee" class="footnote" '
            'rel="footnote">1</a></sup>',
            '<div class="footnotes" role="doc-endnotes">',
        ),
        (
            "kramdown1",
            '<sup id="fnref:ieee"><a href="#fn:ieee" class="footnote">1</a></sup>',
            '<div class="footnotes">',
        ),
        ("mistune", 'id="fnref-1"', '<section class="footnotes">'),
    ],
)
def test_footnote_styles(style: str, ref: str, notes: str) -> None:
    html_ = post_html("IEEE.[^ieee]\n\n[^ieee]: The standard.\n", footnotes=style)
    assert ref in html_ and notes in html_


def test_footnotes_off_leaves_the_text() -> None:
    assert "[^ieee]" in post_html("IEEE.[^ieee]\n\n[^ieee]: The standard.\n", footnotes="none")


def test_kramdown_table_with_leading_separator_and_short_rows() -> None:
    # kramdown: the leading separator is ignored, the row before the next one is the header,
    # short rows are padded and empty cells hold a no-break space.
    html_ = md("| --- |\n| |\n| --- | :-: |\n| a | **b** |\n| c |\n")
    assert html_.count("<table>") == 1
    assert "<th>\u00a0</th>" in html_ and '<th style="text-align: center">\u00a0</th>' in html_
    assert '<td style="text-align: center"><strong>b</strong></td>' in html_
    assert html_.count("<tr>") == 3 and html_.count("\u00a0") == 3


def test_gfm_tables_still_work() -> None:
    html_ = md("a | b\n--|--:\n1 | 2\n")
    assert '<td style="text-align: right">2</td>' in html_


def test_render_config_keys(tmp_path: Path) -> None:
    path = tmp_path / "deploybot.toml"
    path.write_text('[source]\nurl = "."\n[render]\ntypography = false\nfootnotes = "kramdown1"\n')
    cfg = load_config(path)
    assert (cfg.render.typography, cfg.render.footnotes) == (False, "kramdown1")
    path.write_text('[source]\nurl = "."\n[render]\nfootnotes = "pandoc"\n')
    with pytest.raises(ConfigError, match=r"render\.footnotes"):
        load_config(path)


# --- the tvm-site corpus -----------------------------------------------------------------


@cache
def corpus_build() -> SiteBuild:
    options = RenderOptions(timezone="America/Los_Angeles", build_time=BUILD_TIME)
    return build_site(DirTree(CORPUS / "source"), options)


def jekyll_article(page: str) -> str:
    """The rendered post content of a published page (between the post-meta and the end)."""
    start = page.index("</br>") + len("</br>")
    return page[start : page.index("    </div>\n  </div>\n</div>\n</div>", start)]


def our_article(page: str) -> str:
    start = page.index('<div class="post-content">') + len('<div class="post-content">')
    return page[start : page.rindex("</div>\n</article>")]


def visible_text(body: str) -> str:
    body = re.sub(r"<style.*?</style>", " ", body, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def structure(body: str) -> dict[str, object]:
    return {
        "images": len(re.findall(r"<img\b", body)),
        "tables": len(re.findall(r"<table\b", body)),
        "code blocks": len(re.findall(r"<pre\b", body)),
        "heading ids": re.findall(r"<h[1-6][^>]*\bid=\"([^\"]*)\"", body),
    }


@needs_corpus
@pytest.mark.parametrize("path", PUBLISHED)
def test_published_pages_match_jekyll(path: str) -> None:
    theirs = jekyll_article((CORPUS / "published" / path).read_text(encoding="utf-8"))
    ours = our_article(corpus_build().files[path].decode())
    ratio = difflib.SequenceMatcher(
        None, visible_text(theirs), visible_text(ours), autojunk=False
    ).ratio()
    assert ratio >= 0.97, f"{path}: {ratio:.4f}"
    assert structure(ours) == structure(theirs)


@needs_corpus
def test_no_kramdown_or_liquid_markup_is_left_and_warnings_are_only_jb_setup() -> None:
    build = corpus_build()
    pages = [p for p in build.files if p.endswith(".html")]
    assert len(pages) == 22  # 21 posts and the theme index
    for path in pages:
        text = build.files[path].decode()
        assert "{:" not in text and "{%" not in text, path
    assert build.warnings and all("JB/setup" in w.message for w in build.warnings)


@needs_corpus
def test_output_paths_are_jekylls() -> None:
    build = corpus_build()
    for path in PUBLISHED:
        assert path in build.files
    atom = ET.fromstring((CORPUS / "published" / "atom.xml").read_bytes())
    ns = "{http://www.w3.org/2005/Atom}"
    for entry in atom.iter(f"{ns}entry"):
        link = entry.find(f"{ns}link")
        assert link is not None
        url = link.get("href", "").removeprefix("https://tvm.apache.org/")
        assert f"{url}.html" in build.files


def _atom_entries(data: bytes) -> list[tuple[str | None, ...]]:
    ns = "{http://www.w3.org/2005/Atom}"
    return [
        (
            e.findtext(f"{ns}title"),
            e.find(f"{ns}link").get("href"),  # type: ignore[union-attr]
            e.findtext(f"{ns}updated"),
            e.findtext(f"{ns}id"),
        )
        for e in ET.fromstring(data).iter(f"{ns}entry")
    ]


def _rss_items(data: bytes) -> list[tuple[str | None, ...]]:
    return [
        tuple(i.findtext(k) for k in ("title", "link", "pubDate", "guid"))
        for i in ET.fromstring(data).iter("item")
    ]


@needs_corpus
def test_feed_entries_match_the_published_feeds() -> None:
    build = corpus_build()
    published = CORPUS / "published"
    assert _atom_entries(build.files["atom.xml"]) == _atom_entries(
        (published / "atom.xml").read_bytes()
    )
    assert _rss_items(build.files["rss.xml"]) == _rss_items((published / "rss.xml").read_bytes())


def test_preview_passes_the_render_options(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "_posts").mkdir(parents=True)
    (source / "_posts" / "2020-01-01-a.md").write_text('---\ntitle: A\n---\n"Hi" -- x\n')
    build_to_folder(source, tmp_path / "out", render_config=RenderConfig(typography=False))
    assert '<p>"Hi" -- x</p>' in (tmp_path / "out/2020/01/01/a.html").read_text()


@needs_corpus
def test_the_feed_heads_are_the_published_ones() -> None:
    """Title, links, id and author (an empty name and email, as the TVM config sets it) of
    both feeds, as Jekyll published them. Only the build time differs, and the self links:
    ours name the feed (``/atom.xml``), where TVM's empty ``JB.atom_path`` made them the
    site's root (tvm-site-notes §3)."""
    build = corpus_build()
    for name in ("atom.xml", "rss.xml"):
        ours = build.files[name].decode("utf-8")
        theirs = (CORPUS / "published" / name).read_text(encoding="utf-8")
        assert _feed_head(ours) == _feed_head(theirs), name


def _feed_head(feed: str) -> list[str]:
    """The lines before a feed's first entry or item, stripped, without blank lines, self
    links, and with the times cut out."""
    head = re.sub(
        r"<(updated|lastBuildDate|pubDate)>[^<]*<", "<t><", re.split("<entry>|<item>", feed)[0]
    )
    lines = [line.strip() for line in head.splitlines()]
    return [line for line in lines if line and 'rel="self"' not in line]
