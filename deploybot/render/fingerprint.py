"""What a build's output depends on besides the source: the render fingerprint.

The published tree is a function of the source commit, the future cut-off and three more
things, any of which may change with no push to the source:

* the config's settings that shape the output: every ``[render]`` key but those whose
  value never changes it (:data:`NOT_OUTPUT`: the worker count, the highlight cache's
  size), and ``publish.keep`` and ``publish.nojekyll`` (what the tree holds besides the
  build);
* the renderer: deploybot's render modules (``deploybot/render/``) and its bundled theme
  (``templates/``), read byte for byte (an edited install changes them with no new
  version), and deploybot's version (code outside them shapes the output too: reading
  git trees, writing the publish tree) and Python's;
* the libraries that turn text into HTML (:data:`OUTPUT_LIBRARIES`), by version.

:func:`render_fingerprint` digests all three; the pipeline records it in each build note
(``render-fingerprint``) and builds again when a run's differs, so a changed setting or an
upgraded renderer never leaves the publish branch stale. :func:`renderer_digest` (the last
two) is also the build cache's version. :func:`renderer_files` lists the renderer's files
for :mod:`deploybot.pipeline.noop`, whose stamp holds only while none of them changed.

Light on purpose (``os`` at import time): the no-op stamp imports it.
"""

from __future__ import annotations

import os
import sys

import deploybot
from deploybot.record.refs import RENDERER

TYPE_CHECKING = False  # not typing's: the no-op stamp imports this module
if TYPE_CHECKING:
    from deploybot.config.schema import Config

RENDER_PACKAGE = os.path.dirname(os.path.abspath(__file__))
"""The render modules' folder."""
NOT_OUTPUT = frozenset({"jobs", "highlight_cache_bytes"})
"""``[render]`` keys that never change the output (docs/how-it-works.md says so of each)."""
OUTPUT_LIBRARIES = (
    "mistune",
    "Pygments",
    "python-liquid",
    "Jinja2",
    "MarkupSafe",
    "PyYAML",
    "lxml",
    "libsass",
)
"""The distributions whose code makes the output: Markdown, highlighting, Liquid, the
Jinja2 theme and its escaping, YAML, the HTML jekyll-mentions and jemoji write again
(lxml, with the libxml2 it bundles), the CSS of Sass (libsass, with its LibSass)."""


def bundled_templates_dir() -> str:
    """The bundled theme folder: ``<repo>/templates`` in a checkout, else the copy the wheel
    force-includes at ``deploybot/templates``."""
    package = os.path.dirname(os.path.abspath(deploybot.__file__))
    checkout = os.path.join(os.path.dirname(package), "templates")
    return checkout if os.path.isdir(checkout) else os.path.join(package, "templates")


def renderer_files() -> list[tuple[str, str]]:
    """The renderer's files as ``(name, absolute path)``, sorted by name: every file under
    :data:`RENDER_PACKAGE` (``render/...``, without ``__pycache__``) and under
    :func:`bundled_templates_dir` (``templates/...``)."""
    found: list[tuple[str, str]] = []
    for label, root in (("render", RENDER_PACKAGE), ("templates", bundled_templates_dir())):
        for folder, subfolders, files in os.walk(root):
            subfolders[:] = [name for name in subfolders if name != "__pycache__"]
            inner = os.path.relpath(folder, root).replace(os.sep, "/")
            prefix = label if inner == "." else f"{label}/{inner}"
            found.extend((f"{prefix}/{name}", os.path.join(folder, name)) for name in files)
    return sorted(found)


def library_versions() -> dict[str, str]:
    """``{distribution: version}`` of :data:`OUTPUT_LIBRARIES` (``"absent"`` for one not
    installed), nothing imported: read off the names of the ``NAME-VERSION.dist-info``
    folders on ``sys.path`` (the wheel's installed metadata, PEP 427 and the packaging
    spec's "Recording installed projects"; the first on the path wins, as at import), and
    for a distribution installed otherwise (an ``.egg-info``), from its metadata. One listing
    of each folder instead of importing :mod:`importlib.metadata` (about 10 ms a build)."""
    wanted = {_normal(name): name for name in OUTPUT_LIBRARIES}
    versions: dict[str, str] = {}
    for folder in sys.path:
        try:
            entries = os.listdir(folder or ".")
        except OSError:
            continue
        for entry in entries:
            if not entry.endswith(".dist-info"):
                continue
            name, _, version = entry.removesuffix(".dist-info").partition("-")
            found = wanted.get(_normal(name))
            if found is not None and version:
                versions.setdefault(found, version)
    missing = [name for name in OUTPUT_LIBRARIES if name not in versions]
    if missing:
        from importlib import metadata  # lazy: only for what no dist-info folder names

        for name in missing:
            try:
                versions[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                versions[name] = "absent"
    return {name: versions[name] for name in OUTPUT_LIBRARIES}


def _normal(name: str) -> str:
    """A distribution name as the packaging spec normalises it (``python_liquid``; no run
    of separators in these names to collapse). No :mod:`re`: the no-op shortcut imports
    this module (:mod:`deploybot.pipeline.noop`)."""
    return name.lower().replace("-", "_").replace(".", "_")


def renderer_digest() -> str:
    """A digest (16 hex) of the renderer: deploybot's version, Python's (major.minor), the
    :data:`OUTPUT_LIBRARIES` versions and the bytes of every :func:`renderer_files` file.
    Raises ``OSError`` when a file cannot be read."""
    import hashlib

    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{deploybot.__version__} {sys.version_info[:2]}\0".encode())
    digest.update(repr(sorted(library_versions().items())).encode())
    for name, path in renderer_files():
        with open(path, "rb") as file:
            digest.update(b"\0" + name.encode("utf-8", "surrogateescape") + b"\0" + file.read())
    return digest.hexdigest()


def output_settings(config: Config) -> dict[str, object]:
    """The settings of ``config`` that shape the output (see the module docstring), by
    dotted key: ``{"render.feed_limit": 20, ..., "publish.keep": (...), ...}``."""
    import dataclasses

    settings: dict[str, object] = {
        f"render.{f.name}": getattr(config.render, f.name)
        for f in dataclasses.fields(config.render)
        if f.name not in NOT_OUTPUT
    }
    settings["publish.keep"] = tuple(config.publish.keep)
    settings["publish.nojekyll"] = config.publish.nojekyll
    return settings


def render_fingerprint(config: Config, renderer: str | None = None) -> str:
    """The render fingerprint (16 hex) of ``config``: :func:`renderer_digest` (or
    ``renderer``, that digest computed already) and :func:`output_settings`. Two runs with
    the same fingerprint build the same source commit at the same cut-off into the same
    tree. Raises ``OSError`` as :func:`renderer_digest`."""
    import hashlib

    digest = hashlib.blake2b(digest_size=8)
    digest.update((renderer or renderer_digest()).encode() + b"\0")
    digest.update(repr(sorted(output_settings(config).items())).encode())
    return digest.hexdigest()


def setting_digests(config: Config) -> str:
    """Each :func:`output_settings` value's digest (8 hex), as one word for a build note:
    ``publish.keep:1a2b3c4d,publish.nojekyll:...,render.feed_limit:...``, sorted by key.
    Bounded (a few dozen keys of 8 hex each) and free of the values themselves, yet enough
    for the next build to name which setting changed (:func:`changed_settings`)."""
    import hashlib

    return ",".join(
        f"{key}:{hashlib.blake2b(repr(value).encode(), digest_size=4).hexdigest()}"
        for key, value in sorted(output_settings(config).items())
    )


def changed_settings(
    before: tuple[str | None, str | None], now: tuple[str, str]
) -> tuple[str, ...] | None:
    """What changed between two builds' ``(renderer digest, setting digests)`` (a note's,
    either part None when it has none; this run's): the dotted keys whose digests differ
    (:func:`setting_digests`), sorted, and :data:`deploybot.record.refs.RENDERER` last when the
    renderer's differs. A key only one side has came with a new version, whose renderer differs:
    it is not named. None when ``before`` has neither part (an older version's note)."""
    if before[0] is None and before[1] is None:
        return None
    old, new = _digests(before[1] or ""), _digests(now[1])
    names = [key for key in sorted(new) if key in old and old[key] != new[key]]
    if before[0] != now[0]:
        names.append(RENDERER)
    return tuple(names)


def _digests(text: str) -> dict[str, str]:
    pairs = (item.partition(":") for item in text.split(",") if item)
    return {key: value for key, _, value in pairs}
