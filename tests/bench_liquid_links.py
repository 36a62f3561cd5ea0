"""Time ``{% link %}`` and ``{% post_url %}`` on a large site (``python -m
tests.bench_liquid_links [--static N] [--links N] [--posts N]``).

The red team's case: 20,000 ``{% link %}`` tags spread over 20 pages, on a site with 5,000
static files (and 1,000 posts, 2,000 ``{% post_url %}`` tags), built in full with the site's
own (minimal) Liquid layout. Prints the seconds of the build, best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import time

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import MemoryTree


def make_site(static: int, links: int, posts: int, pages: int = 20) -> dict[str, bytes]:
    """Return the files of a site with ``static`` static files, ``posts`` posts and
    ``pages`` pages holding ``links`` link tags (and a tenth as many post_url tags)."""
    files: dict[str, bytes] = {
        "_config.yml": b"title: Bench\n",
        "_layouts/default.html": b"{{ content }}\n",
    }
    for i in range(static):
        files[f"assets/f{i:05d}.png"] = b"png %d" % i
    for i in range(posts):
        day = 1 + i % 28
        files[f"_posts/2020-01-{day:02d}-p{i:05d}.md"] = b"---\nlayout: default\n---\nx\n"
    per_page = links // pages
    for p in range(pages):
        body = [
            f"{{% link assets/f{(p * per_page + j) % static:05d}.png %}}" for j in range(per_page)
        ]
        body += [
            f"{{% post_url 2020-01-{1 + (j % posts) % 28:02d}-p{j % posts:05d} %}}"
            for j in range(p * per_page // 10, (p + 1) * per_page // 10)
        ]
        files[f"page{p:02d}.html"] = ("---\nlayout: default\n---\n" + "\n".join(body)).encode()
    return files


def main() -> None:
    """Build the site and print the best time."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--static", type=int, default=5000)
    parser.add_argument("--links", type=int, default=20000)
    parser.add_argument("--posts", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    tree = MemoryTree(make_site(args.static, args.links, args.posts))
    best = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        built = build_site(tree, RenderOptions())
        best = min(best, time.perf_counter() - start)
    missing = [w for w in built.warnings if "no such" in w.message]
    print(
        f"{args.links:,} links, {args.static:,} static files, {args.posts:,} posts: "
        f"{best:.2f} s (best of {args.repeat}; {len(built.files):,} files, "
        f"{len(missing)} unresolved)"
    )


if __name__ == "__main__":
    main()
