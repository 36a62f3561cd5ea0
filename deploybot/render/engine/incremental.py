"""The incremental build: from the source paths a commit changed to the producers to re-run.

:func:`build_into` is the render stage's entry point for the pipeline. Given the previous
build's cache (:mod:`.cache`) and the paths changed since its source commit, it works out
what changed and re-runs exactly the producers whose recorded dependencies (:mod:`.deps`)
it reaches:

- an added, edited or deleted source re-renders (or removes) its own outputs, and every
  producer that read its blob (``b:PATH``);
- a post whose visibility, date or path changed dirties the post order (``o``): every
  listing of ``site.posts`` (and ``site.tags``/``site.categories``, ``post_url``) is
  re-made; a changed post field dirties ``k:FIELD``: the listings that show that field; a
  changed sitemap entry dirties ``m``;
- the neighbours of every post that changed, moved, appeared or disappeared (also by
  crossing the future cut-off), in the old and the new post order, are re-checked by the
  value of the ``page`` fields they read (``page.previous.url`` etc.), and re-rendered only
  when one differs;
- a page added, removed or with other ``page`` fields dirties ``g`` (``site.pages``); a
  static file added or removed dirties ``f`` (``site.static_files``); ``{% link %}`` reads
  both lists, so it follows;
- a changed layout or include (a file of the theme folder) re-renders the users of
  ``t:NAME``; a file of the theme's ``assets/`` re-copies the assets;
- the site's own Liquid theme: an edited layout or include re-renders the readers of its
  ``b:PATH``; a layout added or removed, the users of its name (``y:NAME``); a ``_data/``
  file, the readers of ``site.data`` (``D``); ``_layouts/`` appearing or going: a full build;
- a collection document added, removed or changed dirties ``c:LABEL`` (``site.LABEL``, its
  neighbours) and ``C`` (``site.collections``);
- a reader of a post's, document's or page's ``content`` (``n:PATH``) or of a post's or
  document's ``output`` (``r:PATH``, :mod:`.contents`) is re-made when what it would see
  now differs from what it saw: the raw body (or ``nil``) of a changed source (a reader
  before it in Jekyll's order), or its rendered content or output once it is rendered
  again (a reader after it: the sources are re-rendered in Jekyll's order, so the reader
  comes later);
- a symlink is re-read when any path its resolution looked at changed (its target, a
  symlink on the way, the missing name it points at: :mod:`deploybot.render.read.symlinks`), as if
  it changed;
- a new build time (``site.time``, the source commit's date) re-makes the readers of
  ``s:time`` (the feeds, undated collection documents); a new future cut-off (the run's
  clock) renders or removes the posts and documents dated between the old and the new one;
- ``_config.yml``, other options or a different renderer version: a full build.

Every case it cannot decide (e.g. two producers writing one output path) falls back to the
full build, whose result is the same by construction; tests check the equality.
"""

from __future__ import annotations

import dataclasses
import heapq
from collections.abc import Callable, Iterable
from pathlib import Path

from deploybot.render.engine import build
from deploybot.render.engine.cache import BuildCache, CacheError, SourceRow, renderer_version
from deploybot.render.engine.deps import (
    WHOLE,
    Key,
    Kind,
    Part,
    collection_key,
    fingerprint,
    read_fingerprint,
)
from deploybot.render.engine.full import (
    ASSETS,
    INDEX,
    BuildReport,
    Engine,
    MemorySink,
    NeedFullBuild,
    OutputSink,
    options_key,
    promotion_of,
)
from deploybot.render.engine.plugin_outputs import PRODUCER, generators
from deploybot.render.engine.site_lists import TIMED_US
from deploybot.render.highlight import cache as highlight_cache
from deploybot.render.links import check as links
from deploybot.render.liquid.plugins import registry
from deploybot.render.liquid.plugins.registry import Needs, enabled
from deploybot.render.model import RenderOptions
from deploybot.render.read.data import is_data_file
from deploybot.render.read.entries import classify
from deploybot.render.read.layered import layout_name
from deploybot.render.read.siteconfig import CONFIG_PATH
from deploybot.render.read.source import SourceTree

CACHE_FILE = "build.sqlite"


def open_cache(folder: Path | None) -> BuildCache:
    """Open the build cache in ``folder`` (``None``: a throw-away one in memory)."""
    return BuildCache.open(None if folder is None else folder / CACHE_FILE, renderer_version())


def build_into(
    tree: SourceTree,
    options: RenderOptions,
    cache: BuildCache,
    sink: OutputSink,
    changed: Iterable[str] | None,
    *,
    full_reason: str = "no previous build to start from",
) -> BuildReport:
    """Build the site of ``tree`` into ``sink``, incrementally when possible.

    Args:
        tree: the new source tree.
        options: how to build.
        cache: the cache of the build the sink's current content came from.
        sink: holds the previous build's outputs (incremental) or nothing (full).
        changed: source paths changed since the cached build (adds, edits, deletes, both
            sides of renames), or ``None`` for a full build.

    Returns:
        A :class:`BuildReport`. The cache holds the new state, uncommitted: the caller
        commits it (:meth:`BuildCache.commit`) once the output is published.

    Raises:
        SourceError: bad input in the source (nothing is committed to the cache).
        NeedFullBuild: only from an incremental attempt when ``changed`` is given but the
            sink was partly written; the caller starts again with a fresh sink and
            ``changed=None``. Raised before anything was written when possible.

    ``full_reason`` is what a full build's report gives as its reason (``changed`` None).
    Code blocks are highlighted through the cache beside ``cache``'s file (none for an
    in-memory cache), written when the build succeeds (:mod:`deploybot.render.highlight.cache`).
    """
    engine = Engine(tree, options, cache, sink)
    folder = None if cache.path is None else cache.path.parent
    with highlight_cache.opened(folder, options.highlight_cache_bytes):
        if changed is None:
            report = engine.full(full_reason)
        else:
            report = _incremental_or_raise(engine, cache, changed)
    cache.set_meta(engine.meta())
    if engine.link_recorder is None:
        return report
    try:
        links.settle(cache, engine.link_recorder)
        return dataclasses.replace(report, links=links.report(cache))
    except CacheError as exc:
        if changed is None:
            raise
        raise NeedFullBuild(f"unreadable cache: {exc}") from exc


def unread_changes(
    tree: SourceTree, options: RenderOptions, cache: BuildCache, changed: Iterable[str]
) -> tuple[str, ...] | None:
    """The source paths ``changed`` (sorted) when the build ``cache`` describes (under the
    same options and ``_config.yml``) reads none of them, so that building ``tree`` would
    change only what depends on ``site.time`` (the feeds' dates); None when it reads one,
    or cannot tell.

    A path is read when Jekyll's reader takes it as a post, page, static file or collection
    document (:func:`~deploybot.render.read.entries.classify`: not excluded, not in ``_drafts/``, no
    name starting with ``.``, ``_``, ``#`` or ``~`` ...), when it is a layout, a data file or in
    the theme folder (the build lists those), when the build read it by another way (an
    include, ``include_relative``, a symlink resolving to it: the cache's ``b:PATH``), or
    when the build listed the tree (``L``). The same answer holds for the cache of a full
    build of ``tree`` itself (a source that moved only in unread paths reads the same).
    Raises ``SourceError`` for a bad ``_config.yml``, as a build would.
    """
    engine = Engine(tree, options, cache, MemorySink())
    paths = sorted(set(changed))
    try:
        if _why_full(engine, cache, paths) or cache.users(Key.PATHS):
            return None
        if _with_theme_changes(engine, cache, paths) != paths:
            return None  # the theme moved: the build reads it
        paths = engine.expand_links(paths)  # a symlink reads what it resolves to
    except CacheError:
        return None
    theme = "" if options.theme == "default" else options.theme.strip("/") + "/"
    for path in paths:
        if classify(path, engine.config, engine.hidden).kind:
            return None
        if layout_name(path) is not None or is_data_file(path):
            return None
        if (theme and path.startswith(theme)) or cache.users(Kind.BLOB + path):
            return None
    return tuple(paths)


def _incremental_or_raise(engine: Engine, cache: BuildCache, changed: Iterable[str]) -> BuildReport:
    """Build incrementally, or raise ``NeedFullBuild`` saying why it cannot."""
    paths = sorted(set(changed))  # once: an iterator would be used up by the first look
    try:
        paths = _with_theme_changes(engine, cache, paths)
        paths = engine.expand_links(paths)  # a symlink changes with what it points to
    except CacheError as exc:
        raise NeedFullBuild(f"unreadable cache: {exc}") from exc
    reason = _why_full(engine, cache, paths)
    if not reason and not engine.setup_incremental(paths):
        reason = "the site's own _layouts/ appeared or went"
    if reason:
        raise NeedFullBuild(reason)
    try:
        return _incremental(engine, paths)
    except CacheError as exc:
        raise NeedFullBuild(f"unreadable cache: {exc}") from exc


def _with_theme_changes(engine: Engine, cache: BuildCache, changed: list[str]) -> list[str]:
    """Return the source paths ``changed`` plus the paths a change of the Jekyll theme
    reaches (:meth:`~deploybot.render.read.layered.LayeredTree.changed_since`). Raises
    ``CacheError`` for an unreadable theme listing in the cache."""
    if engine.layered is None:
        return changed
    try:
        return engine.layered.changed_since(cache.meta("theme") or "", changed)
    except (ValueError, KeyError, TypeError) as exc:
        raise CacheError(f"theme: {exc}") from exc


def _why_full(engine: Engine, cache: BuildCache, changed: list[str]) -> str:
    """Return why an incremental build is not possible ('' when it is)."""
    try:
        if cache.meta("options") != options_key(engine.options):
            return "no usable cache for these render options"
        if bool(cache.meta("theme")) != (engine.layered is not None):
            return "the site's Jekyll theme appeared or went"
        if cache.meta("config") != engine.config_key() or CONFIG_PATH in changed:
            return "the site config changed"
        if engine.layered is not None and engine.layered.plugins_changed(cache.meta("theme") or ""):
            return "the plugins the theme requires changed"
        if cache.collisions():
            return "two sources write the same output"
    except CacheError as exc:
        return f"unreadable cache: {exc}"
    return ""


class _Plan:
    """The producers to re-run and remove, and the dirty dependency keys."""

    def __init__(self) -> None:
        self.render: set[str] = set()
        self.remove: set[str] = set()
        self.dirty: set[str] = set()
        self.check: set[str] = set()  # posts whose ``page`` fields are re-checked by value
        self.content: set[str] = set()  # readers of a content that changed


def _incremental(engine: Engine, changed: list[str]) -> BuildReport:
    cache = engine.cache
    old_time, old_cut = int(cache.meta("time_us") or -1), int(cache.meta("cut_us") or -1)
    plan = _Plan()
    if old_time != engine.time_us:
        plan.dirty.add(Key.TIME)
        # an undated document's URL that holds a part of its date (site.time) moves
        timed = [r.path for r in cache.rows("doc") if r.date_us == TIMED_US]
        changed = sorted(set(changed) | set(timed))
    theme = "" if engine.options.theme == "default" else engine.options.theme.strip("/") + "/"
    updates: list[tuple[SourceRow | None, SourceRow | None]] = []
    for path in changed:
        plan.dirty.add(Kind.BLOB + path)
        name = layout_name(path)
        if name is not None:
            plan.dirty.add(Kind.LAYOUT + name)  # a Liquid layout of that name came or went
        if is_data_file(path):
            plan.dirty.add(Key.DATA)
        if theme and path.startswith(theme):
            rel = path[len(theme) :]
            plan.dirty.add(Key.ASSETS if rel.startswith("assets/") else Kind.TEMPLATE + rel)
        old, new = cache.source(path), engine.read_source(path)
        if old is None or new is None:
            plan.dirty.add(Key.PATHS)
        updates.append((old, new))
    updates = _promoted(engine, plan, updates)
    # neighbours in the old post order: of changed posts and of posts crossing the cut-off
    lo, hi = sorted((old_cut, engine.cut_us))
    window = cache.posts(hi, lo_us=lo) if old_cut != engine.cut_us else []
    moved = [old for old, _ in updates if old is not None and old.kind == "post"]
    _check_neighbours(engine, plan, [*moved, *window], old_cut)
    for old, new in updates:
        if old is not None or new is not None:
            _apply(engine, plan, old, new, old_cut)
    if old_cut != engine.cut_us:
        window = _time_window(engine, plan, old_cut)
    moved = [new for _, new in updates if new is not None and new.kind == "post"]
    _check_neighbours(engine, plan, [*moved, *window], engine.cut_us)
    engine.contents.moved()
    for old, new in updates:
        if old is not None or new is not None:
            _check_bodies(engine, plan, (new or old).path, new)  # type: ignore[union-attr]
    return _run(engine, plan)


def _promoted(
    engine: Engine, plan: _Plan, updates: list[tuple[SourceRow | None, SourceRow | None]]
) -> list[tuple[SourceRow | None, SourceRow | None]]:
    """Return ``updates`` (old and new rows of the changed sources, read as they are) with
    the plugins' promotions (jekyll-readme-index: :func:`~deploybot.render.liquid.plugins.
    registry.promotions`) decided again over the whole site: a changed source promoted is
    read again so, and an unchanged one whose promotion changed joins the updates."""
    if not any(p.promote is not None for p in enabled(engine.config.data)):
        return updates
    cache = engine.cache
    changed = {(new or old).path for old, new in updates}  # type: ignore[union-attr]
    rows = [r for kind in ("page", "static") for r in cache.rows(kind) if r.path not in changed]
    rows += [new for _, new in updates if new is not None and new.kind in ("page", "static")]
    pages = [r.model for r in rows if r.kind == "page"]
    chosen = registry.promotions(
        pages, [r.model for r in rows if r.kind == "static"], engine.config
    )
    done = []
    for old, new in updates:
        if new is not None and new.path in chosen:
            new = engine.read_source(new.path, chosen[new.path])
        done.append((old, new))
    for row in rows:
        if row.path not in changed and promotion_of(row) != chosen.get(row.path):
            plan.dirty.add(Kind.BLOB + row.path)
            done.append((row, engine.read_source(row.path, chosen.get(row.path))))
    return done


LISTED = ("post", "doc", "page")
"""The kinds of source whose ``content`` a listing shows (``output``: posts and documents)."""


def _check_bodies(engine: Engine, plan: _Plan, path: str, new: SourceRow | None) -> None:
    """Re-make the readers of ``path``'s content or output that saw it unrendered (those
    before it in Jekyll's order: its raw body, ``nil``) when that changed, and every reader
    when it is no longer shown."""
    for part in Part:
        key = part.key(path)
        readers = engine.cache.users(key)
        if not readers:
            continue
        if new is None or new.kind not in LISTED or not engine.visible(new, engine.cut_us):
            plan.content.update(readers)
            continue
        rank = engine.contents.rank(path)
        for reader in readers:
            if reader.startswith(":") or engine.contents.rank(reader) > rank:
                continue  # it saw it rendered: checked when ``path`` is rendered again
            seen = engine.cache.deps_of(reader).get(key)
            if seen != fingerprint(engine.contents.before(path, part)):
                plan.content.add(reader)


def _check_neighbours(engine: Engine, plan: _Plan, rows: list[SourceRow], cut_us: int) -> None:
    """Re-check the posts next to each of ``rows`` in the order visible under ``cut_us``."""
    for row in rows:
        for other in engine.cache.neighbours(row.date_us, row.path, cut_us):
            if other is not None:
                plan.check.add(other.path)


def _apply(
    engine: Engine, plan: _Plan, old: SourceRow | None, new: SourceRow | None, old_cut: int
) -> None:
    """Store ``new`` in the cache and note what the change from ``old`` dirties."""
    path = (new or old).path  # type: ignore[union-attr]
    if new is not None and (new.kind != "other" or new.warnings):
        engine.cache.put_source(new)
    else:
        engine.cache.delete_source(path)
    was, now = engine.visible(old, old_cut), engine.visible(new, engine.cut_us)
    if now:
        plan.render.add(path)
    elif was or (old is not None and engine.cache.outputs_of(path)):
        plan.remove.add(path)
    kinds = (getattr(old, "kind", ""), getattr(new, "kind", ""))
    if _listed_static(old) != _listed_static(new):
        plan.dirty.add(Key.STATIC)
    for row in (old, new):
        if row is not None and row.kind == "doc":
            plan.dirty.add(collection_key(row.model.collection))
    if "page" in kinds and _page_fields(old) != _page_fields(new):
        plan.dirty.add(Key.PAGES)
    if "post" not in kinds:
        return
    was = was and old is not None and old.kind == "post"
    now = now and new is not None and new.kind == "post"
    if was != now or (was and now and old.date_us != new.date_us):  # type: ignore[union-attr]
        plan.dirty.add(Key.ORDER)
    if was and now:
        _dirty_fields(plan, old, new)  # type: ignore[arg-type]


def _listed_static(row: SourceRow | None) -> object:
    """The ``site.static_files`` entry of ``row``: a static file's, or the original a
    plugin's page keeps (:attr:`~deploybot.render.model.Page.original`); ``None``."""
    if row is None:
        return None
    if row.kind == "static":
        return row.model
    return row.model.original if row.kind == "page" else None


def _page_fields(row: SourceRow | None) -> str:
    """Return a fingerprint of a page row's ``page`` mapping ('' for anything else)."""
    if row is None or row.kind != "page":
        return ""
    return fingerprint([*build.page_variables(row.model).items(), row.model.appended])


def _dirty_fields(plan: _Plan, old: SourceRow, new: SourceRow) -> None:
    """Dirty ``k:FIELD`` for each post field whose value differs between ``old`` and ``new``."""
    before, after = build.post_variables(old.model), build.post_variables(new.model)
    for key in set(before) | set(after):
        if (
            key not in before
            or key not in after
            or fingerprint(before[key]) != fingerprint(after[key])
        ):
            plan.dirty.update({Kind.POST + key, Kind.POST + WHOLE})


def _time_window(engine: Engine, plan: _Plan, old_cut: int) -> list[SourceRow]:
    """Posts crossing the future cut-off between the old and new build times (returned);
    documents crossing it are written or removed (they stay listed either way, but what
    reads the written ones, a plugin's sitemap, follows their collection's key)."""
    lo, hi = sorted((old_cut, engine.cut_us))
    rows = engine.cache.posts(hi, lo_us=lo)
    for row in rows:
        plan.dirty.add(Key.ORDER)
        (plan.render if engine.visible(row, engine.cut_us) else plan.remove).add(row.path)
    for row in engine.docs_between(lo, hi):
        (plan.render if engine.visible(row, engine.cut_us) else plan.remove).add(row.path)
        # listed either way, but the set of written ones changed (plugins' sitemap, links)
        plan.dirty.add(collection_key(row.model.collection))
    return rows


def _users(engine: Engine, plan: _Plan) -> set[str]:
    """Return the producers that read a dirty key."""
    dirty = set(plan.dirty)
    if any(
        k in (Key.ORDER, Key.STATIC) or k.startswith((Kind.POST, Kind.COLLECTION)) for k in dirty
    ):
        dirty.add(Key.COLLECTIONS)  # site.collections shows the posts, documents and files
    if any(
        k in (Key.ORDER, Key.PAGES, Key.STATIC)
        or k.startswith((Kind.POST, Kind.SITE, Kind.COLLECTION))
        for k in dirty
    ):
        dirty.add(Kind.SITE + WHOLE)
    users: set[str] = set()
    for key in dirty:
        users |= engine.cache.users(key)
    return users


def _changed_page_fields(engine: Engine, path: str) -> bool:
    """Return whether a post's ``page`` fields it read (its neighbours' included) now have
    other values."""
    row = engine.cache.source(path)
    if row is None or not engine.visible(row, engine.cut_us):
        return False
    page = engine.post_page(row)
    for key, fp in engine.cache.deps_of(path).items():
        if key.startswith(Kind.PAGE) and read_fingerprint(page, key[2:]) != fp:
            return True
    return False


def _run(engine: Engine, plan: _Plan) -> BuildReport:
    cache = engine.cache
    todo = plan.render | (_users(engine, plan) - plan.remove)
    todo |= {p for p in plan.check - todo - plan.remove if _changed_page_fields(engine, p)}
    todo |= plan.content - plan.remove
    for producer in sorted(plan.remove):
        for output in cache.outputs_of(producer):
            engine.sink.delete(output)
        cache.forget(producer)
    _render_sources(engine, todo)
    if ASSETS in todo:
        _rerun(engine, ASSETS, engine.render_assets)
    _theme_index(engine, INDEX in todo)
    engine.render_feeds()  # on every build: the feeds carry site.time (the commit's date)
    for plugin in generators(engine.config.data):
        producer = PRODUCER + plugin.name
        if Needs.EVERY_BUILD in plugin.needs or producer in todo or not cache.deps_of(producer):
            _rerun(engine, producer, lambda p=plugin: engine.render_plugin(p))  # type: ignore[misc]
    if cache.collisions():
        raise NeedFullBuild("two sources write the same output")
    return BuildReport(
        False,
        "",
        frozenset(engine.rendered),
        engine.warnings(),
        engine.config.timezone,
        engine.waiting(),
    )


def _render_sources(engine: Engine, todo: set[str]) -> None:
    """Render the sources of ``todo`` in Jekyll's order (:mod:`.contents`), adding to it
    (sources and ``:`` producers) the readers of a content that came out different."""
    cache, contents = engine.cache, engine.contents
    queue = [(contents.rank(p), p) for p in todo if not p.startswith(":")]
    heapq.heapify(queue)
    contents.pending = {p for _, p in queue}
    while queue:
        _, path = heapq.heappop(queue)
        contents.pending.discard(path)
        row = cache.source(path)
        if row is None or not engine.visible(row, engine.cut_us):
            continue
        before = cache.outputs_of(path)
        engine.render_source(row)
        for output in set(before) - set(cache.outputs_of(path)):
            if not cache.producers_of(output):
                engine.sink.delete(output)
        if row.kind not in LISTED:
            continue
        for part in Part:
            key = part.key(path)
            for reader in cache.users(key) - todo:
                seen = fingerprint(contents.seen_by(reader, path, part))
                if cache.deps_of(reader).get(key) == seen:
                    continue
                todo.add(reader)
                if not reader.startswith(":"):
                    heapq.heappush(queue, (contents.rank(reader), reader))
                    contents.pending.add(reader)


def _rerun(engine: Engine, producer: str, render: Callable[[], None]) -> None:
    """Run ``render`` for ``producer``; delete the outputs it no longer writes."""
    before = engine.cache.outputs_of(producer)
    render()
    for output in set(before) - set(engine.cache.outputs_of(producer)):
        if not engine.cache.producers_of(output):
            engine.sink.delete(output)


def _theme_index(engine: Engine, dirty: bool) -> None:
    """Make, re-make or drop the theme's index as pages take or free ``index.html``."""
    had = bool(engine.cache.deps_of(INDEX))
    if engine.page_owns_index():
        if had:
            engine.cache.forget(INDEX)
        return
    if dirty or not had:
        _rerun(engine, INDEX, engine.render_index)
