"""The README and docs/ hold together: each page has a title and is linked from the README,
every relative link reaches a file and, with ``#anchor``, a heading of it (GitHub's rule for
heading ids), and every module or repository folder the pages name exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_BLOCK = re.compile(r"^```.*?^```", re.M | re.S)
MODULE = re.compile(r"`([\w./-]+\.py)(?:::\w+)?`")
FOLDER = re.compile(r"`((?:deploybot|tests|config|templates|docs)/[\w./-]*)`")


def heading_id(heading: str) -> str:
    """The id GitHub gives a Markdown heading: its text (a link's text, not its target),
    lower-cased, without punctuation but ``-`` and ``_``, each space a ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def heading_ids(page: Path) -> set[str]:
    """The ids of the headings of ``page`` (a ``#`` line in a code block is no heading)."""
    text = CODE_BLOCK.sub("", page.read_text(encoding="utf-8"))
    return {heading_id(m.group(1)) for m in re.finditer(r"^#+ (.*)$", text, re.M)}


def broken_links(page: Path) -> list[str]:
    """The relative links of ``page`` that reach no file, or no heading of it."""
    broken = []
    for url in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", url):
            continue
        target, _, anchor = url.partition("#")
        dest = (page.parent / target) if target else page
        if not dest.exists():
            broken.append(f"{url}: no such file")
        elif anchor and anchor not in heading_ids(dest):
            broken.append(f"{url}: no such heading in {dest.name}")
    return broken


def test_heading_ids_follow_githubs_rule() -> None:
    assert heading_id("After a crash or kill -9") == "after-a-crash-or-kill--9"
    assert heading_id("Jekyll's content model") == "jekylls-content-model"
    assert heading_id("[render]: bounds on hostile input") == "render-bounds-on-hostile-input"


def test_broken_links_are_found(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("# B page\n\n```sh\n# not a heading\n```\n")
    page = tmp_path / "a.md"
    page.write_text(
        "# A\n[ok](b.md) [ok](b.md#b-page) [here](#a) [web](https://example.org/x)\n"
        "[gone](c.md) [no heading](b.md#not-a-heading) [no heading here](#b)\n"
    )
    assert broken_links(page) == [
        "c.md: no such file",
        "b.md#not-a-heading: no such heading in b.md",
        "#b: no such heading in a.md",
    ]


def test_every_page_has_a_title_and_the_readme_links_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in PAGES[1:]:
        assert page.read_text(encoding="utf-8").startswith("# "), page.name
        assert f"](docs/{page.name})" in readme, page.name


def test_every_relative_link_reaches_a_file_and_heading() -> None:
    broken = {page.name: broken_links(page) for page in PAGES}
    assert {name: links for name, links in broken.items() if links} == {}


def test_every_module_and_folder_named_exists() -> None:
    """A module is named by its path from the repository root, or from ``deploybot/`` (the
    README once named ``render/entries.py``, which had moved to ``render/read/``)."""
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for name in MODULE.findall(text):
            if not (ROOT / name).exists() and not (ROOT / "deploybot" / name).exists():
                missing.append(f"{page.name}: {name}")
        for name in FOLDER.findall(text):
            if not (ROOT / name.rstrip("/")).exists():
                missing.append(f"{page.name}: {name}")
    assert missing == []
