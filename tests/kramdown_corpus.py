"""Corpus helpers for the kramdown plugin tests: the tvm-site posts and Jekyll's output.

The corpus lives in ``../shared/corpus/tvm-site`` (see its README): 21 post sources, four
published post pages and ``atom.xml`` (the rendered content of the newest 20 posts, built by
the same Jekyll/kramdown toolchain). Tests skip when it is missing.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import mistune
import pytest

from deploybot.render.markdown.kramdown.plugins import kramdown_plugins

SHARED = Path(__file__).resolve().parents[2] / "shared"
TVM = SHARED / "corpus" / "tvm-site"
POSTS = TVM / "source" / "_posts"
PUBLISHED = TVM / "published"
#: The four published post pages: source file name -> page path under published/.
PAGES = {
    "2017-10-30-Bringing-AMDGPUs-to-TVM-Stack-and-NNVM-Compiler-with-ROCm.md": (
        "2017/10/30/Bringing-AMDGPUs-to-TVM-Stack-and-NNVM-Compiler-with-ROCm.html"
    ),
    "2018-10-03-auto-opt-all.md": "2018/10/03/auto-opt-all.html",
    "2019-04-30-opt-cuda-quantized.md": "2019/04/29/opt-cuda-quantized.html",
    "2020-07-14-bert-pytorch-tvm.md": "2020/07/14/bert-pytorch-tvm.html",
}
_HIGHLIGHT = re.compile(r"\{%\s*highlight.*?\{%\s*endhighlight\s*%\}", re.S)
_LIQUID = re.compile(r"\{%.*?%\}|\{\{.*?\}\}", re.S)
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---[ \t]*\n", re.S)
_ATOM = "{http://www.w3.org/2005/Atom}"


def require_corpus() -> None:
    """Skip the calling test when the shared corpus is not checked out next to the repo."""
    if not POSTS.is_dir():
        pytest.skip(f"the tvm-site corpus is missing at {TVM}")


def post_sources() -> list[Path]:
    """Return the 21 post source files, sorted by name (requires the corpus)."""
    return sorted(p for p in POSTS.iterdir() if p.suffix in (".md", ".markdown"))


def post_markdown(path: Path, *, drop_highlight: bool = False) -> str:
    """Return a post's Markdown without front matter and Liquid tags (another stage's job).

    With ``drop_highlight``, ``{% highlight %}…{% endhighlight %}`` blocks go entirely.
    """
    text = _FRONT_MATTER.sub("", path.read_text(encoding="utf-8"), count=1)
    if drop_highlight:
        text = _HIGHLIGHT.sub("", text)
    return _LIQUID.sub("", text)


def render(text: str, **options: bool) -> str:
    """Render with a plain mistune + table/strikethrough/footnotes + kramdown plugins."""
    md = mistune.create_markdown(
        escape=False,
        plugins=["table", "strikethrough", "footnotes", *kramdown_plugins(**options)],
    )
    html = md(text)
    assert isinstance(html, str)
    return html


def published_content(source_name: str) -> str:
    """Return the rendered post body of a published page (between the post meta and footer)."""
    page = (PUBLISHED / PAGES[source_name]).read_text(encoding="utf-8")
    start = page.index("</br>", page.index('<p class="post-meta">')) + len("</br>")
    end = page.index("\n    </div>\n  </div>\n</div>\n</div>", start)
    return page[start:end]


def feed_contents() -> dict[str, str]:
    """Return post slug -> rendered content for the 20 entries of the published atom.xml."""
    root = ET.parse(PUBLISHED / "atom.xml").getroot()
    contents: dict[str, str] = {}
    for entry in root.iter(f"{_ATOM}entry"):
        link = entry.find(f"{_ATOM}link")
        content = entry.find(f"{_ATOM}content")
        if link is not None and content is not None and content.text:
            contents[link.get("href", "").rsplit("/", 1)[-1]] = content.text
    return contents


def feed_posts() -> list[tuple[Path, str]]:
    """Return (post source, published HTML) for the 20 posts in the published atom.xml,
    sorted by source name (requires the corpus)."""
    feed = feed_contents()
    pairs = [(path, feed[slug(path)]) for path in post_sources() if slug(path) in feed]
    assert len(pairs) == 20, "every atom.xml entry has a source post"
    return pairs


def slug(path: Path) -> str:
    """Return the post slug of a source file name (date prefix and extension dropped)."""
    return re.sub(r"^\d{4}-\d\d-\d\d-", "", path.stem)


def heading_ids(html: str) -> list[str]:
    """Return the ids of the ``<h1>``…``<h6>`` elements in ``html``, in order."""
    return re.findall(r"<h[1-6][^>]*\sid=\"([^\"]*)\"", html)


def sized_images(html: str) -> int:
    """Return how many ``<img>`` tags in ``html`` carry a ``width`` attribute."""
    return len(re.findall(r"<img\b[^>]*\swidth=", html))
