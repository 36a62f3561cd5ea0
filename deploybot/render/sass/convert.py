"""Sass and SCSS pages become CSS, as jekyll-sass-converter 2.2 (Jekyll 4.3) makes them.

A ``.scss`` or ``.sass`` file with front matter is a page: its body goes through Liquid,
then LibSass (libsass-python, the engine the Ruby ``sassc`` gem that jekyll-sass-converter
2.x calls wraps, so the CSS is the same byte for byte), and is written with ``.css`` in
place of its extension, in no layout (Jekyll's ``asset_file?``). What this follows of
``converters/scss.rb`` (``_config.yml``'s ``sass:`` mapping, :func:`sass_settings`):

- ``style``: ``nested``, ``expanded``, ``compact`` or ``compressed`` (a leading ``:``
  dropped); anything else, or none, is ``compact`` (the converter's default with sassc).
- ``sass_dir`` (default ``_sass``) and ``load_paths`` (folders of the source, globs
  allowed) are the load path, ``load_paths`` first (:func:`load_paths`).
- ``sourcemap``: ``always`` (the default), ``never`` or ``development`` (only when
  ``jekyll.environment`` is ``development``, Jekyll's default for ``jekyll build``). With
  a map, the CSS ends with ``/*# sourceMappingURL=NAME.css.map */`` and ``NAME.css.map``
  is written beside it, its ``sources`` relative to the site folder with the stylesheet
  named as if it sat at the root (``main.scss`` for ``assets/main.scss``: the converter
  passes the page's name, not its path), ``sourcesContent`` included.
- ``line_comments`` (``/* line N, FILE */`` before each rule), ``precision`` (LibSass's
  default 10 digits), ``add_charset`` (a leading byte-order mark becomes
  ``@charset "UTF-8";``; else it is dropped). Paths in line comments and errors are
  relative to the site folder (Jekyll's are relative to the folder it runs in).

``@import`` is resolved as LibSass resolves it on disk (the importing file's folder first,
the stylesheet counting as a file of the site's root folder, then each load path;
``_name``, ``name`` with ``.scss``/``.sass``/``.css``, ``name/_index``…; two candidates in
one folder are an error) but every file is read through the source tree (never the disk):
:class:`TreeImporter`. Every path looked at is returned, so the engine records it as a
dependency (``b:PATH``) and an edited, added or removed partial re-renders the stylesheets
that import it and nothing else. An import that is missing or leaves the tree is a Sass
error. ``url(…)``, ``.css``, ``http://`` and ``//`` imports stay CSS ``@import`` rules.

A Sass error stops the build (``SourceError``, exit 1) naming the file and line, the
partial's when it is in one. The compile runs in a forked child with bounded time and
memory (:mod:`.bounded`): LibSass cannot be interrupted from Python.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import posixpath
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deploybot.render.read.source import SourceTree
from deploybot.render.sass.bounded import (
    OverLimit,
    ProcessLimits,
    reached_address_limit,
    run_bounded,
)
from deploybot.support.errors import SourceError

if TYPE_CHECKING:
    import ctypes

SASS_EXTS = frozenset({".sass", ".scss"})
STYLES = ("nested", "expanded", "compact", "compressed")
DEFAULT_STYLE = "compact"
"""jekyll-sass-converter 2.x's default with sassc (``expanded`` is sass-embedded's)."""
DEFAULT_PRECISION = 10
"""LibSass 3.6's own default (libsass-python's is 5: it is always passed)."""
SASS_SECONDS = 20.0
"""The wall-clock seconds one stylesheet may take to compile (minima takes 0.02 s)."""
SASS_MEMORY = 512 * 2**20
"""The memory one compile may use beyond the process it is forked from, in bytes."""
DOCUMENT_ENTRY = "stdin"
"""The name LibSass gives a collection document's stylesheet: jekyll-sass-converter 2.2's
``filename`` when no page is associated with the converter (``converters/scss.rb``)."""
_EXTS = (".scss", ".sass", ".css")
_BOM = "\ufeff"
_KEEP = frozenset({"style", "sass_dir", "load_paths", "sourcemap", "line_comments"})
_KEEP |= {"precision", "add_charset", "implementation"}


@dataclass(frozen=True)
class SassSettings:
    """``_config.yml``'s ``sass:`` mapping as the converter reads it (module doc)."""

    style: str = DEFAULT_STYLE
    sass_dir: str = "_sass"
    load_paths: tuple[str, ...] = ()
    sourcemap: str = "always"
    line_comments: bool = False
    precision: int = DEFAULT_PRECISION
    add_charset: bool = False

    def writes_map(self, environment: str) -> bool:
        """Whether a ``.css.map`` is written (``sourcemap_required?``) when
        ``jekyll.environment`` is ``environment``."""
        if self.sourcemap == "never":
            return False
        return not (self.sourcemap == "development" and environment != "development")


@dataclass(frozen=True)
class SassLimits:
    """What one compile may use: wall-clock ``seconds``, ``memory`` bytes, and at most
    ``max_output`` bytes of CSS and of source map (``[render] max_page_bytes``) and of
    imported source in total."""

    seconds: float = SASS_SECONDS
    memory: int = SASS_MEMORY
    max_output: int = 50_000_000


@dataclass(frozen=True)
class Stylesheet:
    """A compiled stylesheet: the ``css`` text, its ``source_map`` (JSON text, or ``None``
    when none is written) and every source path the imports looked at, in order."""

    css: str
    source_map: str | None
    looked_at: tuple[str, ...]


@dataclass(frozen=True)
class _Failed:
    """A compile's error (the child sends it back): message, file and line, paths seen."""

    message: str
    path: str
    line: int | None
    looked_at: tuple[str, ...]
    out_of_memory: bool = False


def is_sass(path: str) -> bool:
    """Whether the source ``path`` is a Sass or SCSS file (by its extension)."""
    return posixpath.splitext(path)[1].lower() in SASS_EXTS


def sass_settings(value: object) -> tuple[SassSettings, tuple[str, ...]]:
    """Read ``_config.yml``'s ``sass:`` value (a mapping, or ``None``) as the converter
    does; return the settings and a note for each key not followed here:
    ``implementation: sass-embedded`` (Dart Sass; LibSass compiles it all the same), a
    ``load_paths`` folder outside the source (never searched) and the other keys the
    converter hands on to sassc. ``sass_dir`` stays inside the source, as Jekyll's
    ``sanitized_path`` keeps it (``/x`` and ``../x`` are ``x``)."""
    if not isinstance(value, Mapping):
        return SassSettings(), ()
    notes: list[str] = []
    style = str(value.get("style") or DEFAULT_STYLE).removeprefix(":")
    sourcemap = str(value.get("sourcemap") or "always").removeprefix(":")
    precision = value.get("precision")
    if value.get("implementation") not in (None, "sassc"):
        notes.append(
            f"sass.implementation {value['implementation']} is not supported: LibSass used"
        )
    notes += [
        f"sass.{key} is not supported: ignored"
        for key in sorted(map(str, value))
        if key not in _KEEP
    ]
    load = _strings(value.get("load_paths"))
    notes += [
        f"sass.load_paths {p!r} is outside the source: not searched"
        for p in load
        if _inside(p) is None
    ]
    settings = SassSettings(
        style=style if style in STYLES else DEFAULT_STYLE,
        sass_dir=posixpath.normpath("/" + str(value.get("sass_dir") or "_sass")).lstrip("/"),
        load_paths=load,
        sourcemap=sourcemap,
        line_comments=value.get("line_comments") not in (None, False),
        precision=precision if isinstance(precision, int) and precision >= 0 else 10,
        add_charset=value.get("add_charset") not in (None, False),
    )
    return settings, tuple(notes)


def _strings(value: object) -> tuple[str, ...]:
    """Ruby's ``Array(value)`` of strings: ``nil`` is none, a list its items, else one."""
    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    return tuple(str(item) for item in items if item is not None)


def load_paths(settings: SassSettings, folders: Callable[[], Sequence[str]]) -> tuple[str, ...]:
    """Return the load path: ``settings.load_paths`` (each a folder of the source, or a
    glob matched against ``folders()``, the source's folders, sorted) then
    ``settings.sass_dir``, without repeats and without those that leave the source (an
    absolute path or one through ``..``: Jekyll's ``safe`` mode refuses them too).

    Extend here for more folders (a theme's ``_sass`` comes through a layered tree)."""
    found: list[str] = []
    for entry in (*settings.load_paths, settings.sass_dir):
        clean = _inside(entry)
        if clean is None:
            continue
        if any(ch in clean for ch in "*?["):
            found.extend(f for f in folders() if fnmatchcase(f, clean))
        else:
            found.append(clean)
    return tuple(dict.fromkeys(found))


def _inside(path: str) -> str | None:
    """``path`` normalised inside the source (``""`` for its root), or ``None`` outside."""
    if path.startswith("/"):
        return None
    clean = posixpath.normpath(path)
    if clean == ".":
        return ""
    if clean == ".." or clean.startswith("../"):
        return None
    return clean


def _plain_css(path: str) -> bool:
    """Whether LibSass keeps ``@import "path"`` as a CSS import without reading a file:
    a ``.css`` name, a URL with a scheme other than ``file``, or a protocol-relative ``//``
    URL."""
    scheme = re.match(r"([A-Za-z_][\w-]*)://", path)
    if scheme is not None and scheme.group(1) == "file":
        return False  # LibSass would look for it on disk: the tree is searched (in vain)
    return (len(path) > 4 and path.endswith(".css")) or scheme is not None or path.startswith("//")


@dataclass
class TreeImporter:
    """LibSass's importer callback over ``tree``: ``(path, previous)`` -> the one file
    ``@import "path"`` names, as ``[(tree path, source)]`` (LibSass's own resolution,
    module doc), or ``None`` for a CSS import. The stylesheet's own imports resolve from
    ``root`` (LibSass gives their ``previous`` as an absolute path; the files this returns
    are tree paths, relative). Records every path looked at (:attr:`looked_at`) and the
    first problem (:attr:`error`: LibSass turns the exception raised into its own error at
    the ``@import``). At most ``max_bytes`` of source are imported in total. ``home``: a
    descriptor of the folder the tree is read from (a tree may hold a relative path) when
    the compile runs in another (:func:`_compile_here`)."""

    tree: SourceTree
    root: str
    paths: tuple[str, ...]
    max_bytes: int
    home: int | None = None
    looked_at: list[str] = field(default_factory=list)
    error: str | None = None
    total: int = 0

    def __call__(self, path: str, previous: str) -> list[tuple[str, str]] | None:
        if _plain_css(path):
            return None
        back = os.open(".", os.O_RDONLY) if self.home is not None else None
        try:
            if self.home is not None:
                os.fchdir(self.home)
            return [self._find(path, previous)]
        except _ImportError as exc:
            if self.error is None:
                self.error = str(exc)
            raise
        finally:
            if back is not None:
                os.fchdir(back)
                os.close(back)

    def _find(self, path: str, previous: str) -> tuple[str, str]:
        base = self.root if previous.startswith("/") else posixpath.dirname(previous)
        if path.startswith("/"):
            raise _ImportError(
                f"File to import not found or unreadable: {path} (outside the source)."
            )
        for folder in (base, *self.paths):
            target = _inside(posixpath.join(folder, path))
            if target is None:
                raise _ImportError(
                    f"File to import not found or unreadable: {path} (outside the source)."
                )
            found = [c for c in _candidates(target) if self._exists(c)]
            if not found:
                found = [c for c in _index_candidates(target) if self._exists(c)]
            if len(found) > 1:
                names = "".join(f"  {posixpath.relpath(c, folder or '.')}\n" for c in found)
                raise _ImportError(
                    f"It's not clear which file to import for '@import \"{path}\"'.\n"
                    f"Candidates:\n{names}Please delete or rename all but one of these files."
                )
            if found:
                return found[0], self._source(found[0])
        raise _ImportError(f"File to import not found or unreadable: {path}.")

    def _exists(self, path: str) -> bool:
        self.looked_at.append(path)
        try:
            self.tree.blob_id(path)
        except KeyError:
            return False
        return True

    def _source(self, path: str) -> str:
        try:
            data = self.tree.read(path)
        except SourceError as exc:  # over max_file_bytes
            raise _ImportError(f"{path}: {exc.message}") from exc
        self.total += len(data)
        if self.total > self.max_bytes:
            raise _ImportError(f"the imports pass {self.max_bytes:,} bytes")
        text = data.decode("utf-8", "replace")
        return sass2scss(text) if path.lower().endswith(".sass") else text


class _ImportError(Exception):
    """An ``@import`` that names no single file of the source."""


def _candidates(target: str) -> list[str]:
    """The files LibSass 3.6 tries first for an import of ``target`` in one folder, in
    its order (``File::resolve_includes``): as given, ``_name``, ``_name.EXT``,
    ``name.EXT``."""
    folder, name = posixpath.split(target)
    found = [name, "_" + name, *(f"_{name}{ext}" for ext in _EXTS)]
    found += [name + ext for ext in _EXTS]
    return [posixpath.join(folder, file) for file in found]


def _index_candidates(target: str) -> list[str]:
    """The index files LibSass 3.6 tries when none of :func:`_candidates` is there:
    ``name/_index.EXT``, ``name/index.EXT`` (none when the name ends with an EXT)."""
    if target.endswith(_EXTS):
        return []
    return [f"{target}/{index}{ext}" for index in ("_index", "index") for ext in _EXTS]


_PRETTIFY_1_KEEP_COMMENT = 1 | 32  # sass2scss.h; what LibSass uses for a .sass file it reads


@functools.cache
def _libsass_python() -> Any:
    """libsass-python's ``sass`` module. It is imported at the first stylesheet, not with
    this module (lazy on purpose: it loads LibSass, which only a stylesheet needs), and in
    the build's process: :func:`compile_stylesheet` loads it before the bounded child is
    forked, so the child's memory and time limits do not pay for loading it again."""
    import sass

    return sass


@functools.cache
def _libsass() -> ctypes.CDLL:
    """The LibSass inside libsass-python's extension (its C API is exported)."""
    import ctypes  # lazy on purpose (see _libsass_python)

    import _sass

    lib = ctypes.CDLL(_sass.__file__)
    lib.sass2scss.restype = ctypes.c_void_p
    lib.sass2scss.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.sass_free_memory.argtypes = [ctypes.c_void_p]
    return lib


def sass2scss(text: str) -> str:
    """Return indented-syntax Sass ``text`` as SCSS, as LibSass converts a ``.sass`` file
    it reads from disk (sass2scss, prettify 1, comments kept); an importer's sources are
    not converted by LibSass, so :class:`TreeImporter` calls this for ``.sass`` partials."""
    import ctypes  # lazy on purpose (see _libsass)

    lib = _libsass()
    pointer = lib.sass2scss(text.encode("utf-8"), _PRETTIFY_1_KEEP_COMMENT)
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        lib.sass_free_memory(pointer)


_WHERE_RE = re.compile(r"^\s*on line (\d+)(?::\d+)? of (.+?)\s*$", re.MULTILINE)


def _failure(
    message: str, entry: str, importer: TreeImporter, path: str, body_line: int
) -> _Failed:
    """The :class:`_Failed` of LibSass's error text ``message`` (``Error: …`` then ``on
    line L:C of FILE``): FILE is ``entry`` (the stylesheet, at ``path`` with its body at
    ``body_line``) or a tree path."""
    text = message.removeprefix("Error: ")
    where = _WHERE_RE.search(text)
    what = " ".join((importer.error or (text[: where.start()] if where else text)).split())
    file, line = path, None
    if where is not None:
        line = int(where.group(1))
        if where.group(2) == entry:
            line += body_line - 1
        else:
            file = where.group(2)
    return _Failed(what, file, line, tuple(importer.looked_at))


def _compile_here(
    text: str,
    path: str,
    body_line: int,
    tree: SourceTree,
    settings: SassSettings,
    environment: str,
    limits: SassLimits,
    paths: tuple[str, ...],
    folder: str,
    entry: str | None,
) -> Stylesheet | _Failed:
    """Compile in ``folder`` (an empty one; this process goes there: run it in a child):
    the stylesheet is written there under its name (``entry`` when given), and LibSass
    names every file relative to it, the imported ones by their tree paths, as Jekyll's
    converter does when Jekyll runs in the site's folder."""
    name = entry or posixpath.basename(path)
    stem = posixpath.splitext(name)[0]
    if entry is not None and path.lower().endswith(".sass"):
        text = sass2scss(text)  # LibSass reads ``stdin`` as SCSS; sassc passes syntax: :sass
    (Path(folder) / name).write_bytes(text.encode("utf-8"))
    home = os.open(".", os.O_RDONLY)
    os.chdir(folder)
    importer = TreeImporter(tree, "", paths, limits.max_output, home)
    options: dict[str, Any] = {
        "filename": name,
        "output_style": settings.style,
        "source_comments": settings.line_comments,
        "precision": settings.precision,
        "importers": [(0, importer)],
    }
    if settings.writes_map(environment):
        options |= {
            "source_map_filename": stem + ".css.map",
            "output_filename_hint": stem + ".css",
            "source_map_contents": True,
        }
    sass = _libsass_python()
    try:
        result = sass.compile(**options)
    except sass.CompileError as exc:
        failed = _failure(str(exc), name, importer, path, body_line)
        return dataclasses.replace(failed, out_of_memory=reached_address_limit())
    css, source_map = result if isinstance(result, tuple) else (result, None)
    for part in (css, source_map or ""):
        if len(part.encode("utf-8")) > limits.max_output:
            message = f"the compiled CSS passes {limits.max_output:,} bytes (render.max_page_bytes)"
            return _Failed(message, path, None, tuple(importer.looked_at))
    if css.startswith(_BOM):  # the converter's BYTE_ORDER_MARK substitution
        css = ('@charset "UTF-8";' if settings.add_charset else "") + css[1:]
    return Stylesheet(css, source_map, tuple(importer.looked_at))


def compile_stylesheet(
    text: str,
    path: str,
    tree: SourceTree,
    settings: SassSettings,
    *,
    body_line: int = 1,
    environment: str = "development",
    limits: SassLimits | None = None,
    folders: Callable[[], Sequence[str]] = tuple,
    entry: str | None = None,
) -> Stylesheet:
    """Compile ``text`` (the body, after Liquid, of the Sass or SCSS page ``path``, its
    first line at ``body_line`` of the file) with ``settings``, imports read from
    ``tree``; ``folders`` lists the source's folders (for globs in ``load_paths``);
    ``entry`` is the name LibSass is given for it (default its file name;
    :data:`DOCUMENT_ENTRY` for a collection document).

    Returns the :class:`Stylesheet`; every path it looked at has been looked at in
    ``tree`` in this process too (an importing build records them as dependencies).

    Raises:
        SourceError: a Sass error (at the file and line LibSass names: the stylesheet's
            or a partial's), an import that is missing or outside the source, or a limit
            of ``limits`` passed (time, memory, output size).
    """
    limits = limits or SassLimits()
    _libsass_python(), _libsass()  # loaded here, once, not in each forked child
    paths = load_paths(settings, folders)
    folder = tempfile.mkdtemp(prefix="deploybot-sass-")
    work = functools.partial(
        _compile_here,
        text, path, body_line, tree, settings, environment, limits, paths, folder, entry,
    )  # fmt: skip
    process = ProcessLimits(limits.seconds, limits.memory, 3 * limits.max_output + 2**20)
    try:
        done = run_bounded(work, process)
    except OverLimit as exc:
        raise SourceError(f"Sass: compiling this stylesheet {exc.message}", path) from exc
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for seen in done.looked_at:  # again here: a tracking tree records what was read
        with contextlib.suppress(KeyError):
            tree.blob_id(seen)
    if isinstance(done, _Failed):
        said = ("Unable to allocate memory", "bad_alloc")
        if done.out_of_memory or any(words in done.message for words in said):
            message = f"compiling this stylesheet needs more than {limits.memory // 2**20:,} MB"
            raise SourceError(f"Sass: {message}", path)
        raise SourceError(f"Sass conversion error: {done.message}", done.path, done.line)
    return done


def tree_folders(tree: SourceTree) -> list[str]:
    """Return every folder of ``tree`` (each file's parents), sorted: what globs in
    ``load_paths`` are matched against."""
    found: set[str] = set()
    for path in tree.paths():
        folder = posixpath.dirname(path)
        while folder and folder not in found:
            found.add(folder)
            folder = posixpath.dirname(folder)
    return sorted(found)


def convert_text(
    text: str,
    syntax: str,
    tree: SourceTree,
    site_sass: object,
    *,
    path: str,
    limits: SassLimits | None = None,
) -> str:
    """Return the CSS of the Sass (``syntax`` ``"sass"``) or SCSS (``"scss"``) ``text``,
    as Jekyll's ``sassify``/``scssify`` filters make it: the site's converter with
    ``_config.yml``'s ``sass:`` settings (``site_sass``), but no page associated with it,
    so LibSass names the text ``stdin`` and no source map or ``sourceMappingURL`` is
    written (jekyll-sass-converter 2.2's ``convert`` with ``associate_page_failed?``).
    Imports are read from ``tree``.

    Raises ``SourceError`` at ``path`` (the page using the filter) for a Sass error or a
    limit passed, as :func:`compile_stylesheet` does."""
    settings, _ = sass_settings(site_sass)
    settings = dataclasses.replace(settings, sourcemap="never")
    if syntax == "sass":
        text = sass2scss(text)
    sheet = compile_stylesheet(
        text,
        path,
        tree,
        settings,
        limits=limits,
        folders=lambda: tree_folders(tree),
        entry=DOCUMENT_ENTRY,
    )
    return sheet.css


def map_path(css_path: str, source_path: str) -> str:
    """Return where the source map of the stylesheet ``source_path`` written at
    ``css_path`` goes: ``STEM.css.map`` beside it (``assets/main.scss`` written at
    ``assets/main.css``: ``assets/main.css.map``; Jekyll's ``SourceMapPage``), the name
    its CSS's ``sourceMappingURL`` gives."""
    stem = posixpath.splitext(posixpath.basename(source_path))[0]
    return posixpath.join(posixpath.dirname(css_path), stem + ".css.map")


__all__ = [
    "DOCUMENT_ENTRY",
    "SASS_EXTS",
    "SassLimits",
    "SassSettings",
    "Stylesheet",
    "TreeImporter",
    "compile_stylesheet",
    "convert_text",
    "is_sass",
    "load_paths",
    "map_path",
    "sass2scss",
    "sass_settings",
    "tree_folders",
]
