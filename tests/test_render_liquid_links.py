"""``{% link %}`` and ``{% post_url %}`` look their targets up in an index made once per
build and list (:class:`deploybot.render.liquid.links.LinkIndex`), not by scanning every
post, page and static file per tag; their answers and their dependencies are unchanged."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from deploybot.render.engine.build import build_site
from deploybot.render.liquid.templates import Liquid, render_liquid
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import MemoryTree
from tests.incremental_site import post_text
from tests.test_render_incremental_model import P0, P3, _steps


class CountingList(list[Any]):
    """A list that counts the passes over it (the work a look-up does)."""

    passes = 0

    def __iter__(self) -> Iterator[Any]:
        CountingList.passes += 1
        return super().__iter__()


def _site(static: int, posts: int) -> dict[str, Any]:
    return {
        "posts": CountingList(
            {"path": f"_posts/2020-01-01-p{i}.md", "url": f"/2020/01/01/p{i}"} for i in range(posts)
        ),
        "pages": CountingList([{"path": "about.md", "url": "/about/"}]),
        "static_files": CountingList(
            {"path": f"/img/f{i}.png", "url": f"/img/f{i}.png"} for i in range(static)
        ),
    }


def test_each_list_is_indexed_once_however_many_tags_render() -> None:
    site, liquid = _site(static=2000, posts=300), Liquid(None)
    CountingList.passes = 0
    body = "".join(
        f"{{% link img/f{i}.png %}} {{% post_url 2020-01-01-p{i} %}}\n" for i in range(100)
    )
    for page in range(50):  # 50 pages, 10,000 tags in all
        result = render_liquid(body, path=f"p{page}.md", variables={"site": site}, liquid=liquid)
        assert result.warnings == ()
    assert result.text.splitlines()[99] == "/img/f99.png /2020/01/01/p99"
    # post_url's map of the posts; link's of the posts, the pages and the static files
    assert liquid.links.builds == 4
    assert CountingList.passes == 4


def test_a_new_site_mapping_is_indexed_anew() -> None:
    liquid = Liquid(None)
    first, second = _site(static=3, posts=1), _site(static=5, posts=1)
    text = render_liquid(
        "{% link img/f4.png %}", path="a.md", variables={"site": first}, liquid=liquid
    )
    assert (text.text, len(text.warnings)) == ("", 1)
    again = render_liquid(
        "{% link img/f4.png %}", path="a.md", variables={"site": second}, liquid=liquid
    )
    assert (again.text, again.warnings) == ("/img/f4.png", ())


def test_the_first_entry_in_list_order_wins_as_a_scan() -> None:
    site = {
        "posts": [
            {"path": "a/_posts/2020-01-01-x.md", "url": "/first"},
            {"path": "_posts/2020-01-01-x.md", "url": "/second"},
        ],
        "pages": [{"path": "_posts/2020-01-01-x.md", "url": "/page"}],
    }
    out = render_liquid(
        "{% post_url 2020-01-01-x %} {% post_url a/2020-01-01-x %} "
        "{% link _posts/2020-01-01-x.md %}",
        path="a.md",
        variables={"site": site},
    )
    assert out.text == "/first /first /second"


def test_link_finds_written_collection_documents() -> None:
    files = {
        "_config.yml": b"collections:\n  recipes:\n    output: true\n  notes: {}\n",
        "_recipes/cake.md": b"---\ntitle: Cake\n---\nx\n",
        "_notes/a.md": b"---\ntitle: A\n---\nx\n",
        "index.md": b"---\n---\n{% link _recipes/cake.md %} [{% link _notes/a.md %}]\n",
    }
    built = build_site(MemoryTree(files), RenderOptions())
    assert b"/recipes/cake.html []" in built.files["index.html"]
    assert [w.message for w in built.warnings] == [
        "{% link _notes/a.md %}: no such file in the site"
    ]


def test_every_page_looking_a_file_up_depends_on_it() -> None:
    # The second page's look-up hits the map the first one made: it must still record
    # that it read the static files, or removing the file would leave its link behind.
    body = "{% link img/alpha.png %}"
    inc = _steps(
        {"img/alpha.png": b"png", P0: post_text("First", body), P3: post_text("Third", body)},
        {"img/alpha.png": None},
    )
    assert b"/img/alpha.png" not in inc.outputs["2021/01/post-0.html"]
    assert b"/img/alpha.png" not in inc.outputs["2021/01/post-3.html"]
