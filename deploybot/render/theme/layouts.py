"""Layouts: Jinja2 templates from the bundled theme or from a theme folder in the source tree.

Layouts are untrusted code (anyone who can push writes the theme): every theme runs in
:class:`~deploybot.render.theme.sandbox.LayoutSandbox`, with a budget per render.

A Jekyll ``layout: NAME`` maps to the template ``NAME.html``; ``default`` also finds
``base.html``. ``layout: null`` or ``none`` renders without a layout. Templates get ``site``,
``page`` and ``content`` (``content`` is :class:`markupsafe.Markup`: already HTML); autoescape
is on. Filters: ``date(fmt)`` (Ruby ``strftime`` subset, no locale), ``date_to_xmlschema``,
``date_to_rfc822``, ``relative_url`` and ``absolute_url`` (Jekyll's URL filters).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import jinja2
from markupsafe import Markup

from deploybot.render import fingerprint
from deploybot.render.liquid.jekyll_filters import FILTERS, Filter
from deploybot.render.model import LayoutLimits, RenderWarning, SiteConfig
from deploybot.render.read.source import SourceTree
from deploybot.render.theme.compiled import COMPILED
from deploybot.render.theme.deferred import check_theme_folder
from deploybot.render.theme.sandbox import LayoutLimitError, LayoutSandbox
from deploybot.support.errors import DeploybotError, SourceError, one_line

NO_LAYOUT = frozenset({"none", "null", "false"})
ALIASES: Mapping[str, tuple[str, ...]] = {"default": ("default.html", "base.html")}


def bundled_templates_dir() -> Path:
    """Return the bundled theme folder
    (:func:`deploybot.render.fingerprint.bundled_templates_dir`)."""
    return Path(fingerprint.bundled_templates_dir())


class SourceTreeLoader(jinja2.BaseLoader):
    """Load ``NAME`` from ``<folder>/NAME`` in a :class:`SourceTree` (a theme in the source)."""

    def __init__(self, tree: SourceTree, folder: str) -> None:
        self.tree = tree
        self.folder = folder.strip("/")

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        """Return ``(source, path, uptodate)``; raises ``TemplateNotFound`` when absent or
        when ``template`` has a ``..`` or empty segment (as Jinja2's own file loader does)."""
        path = "/".join([self.folder, *jinja2.loaders.split_template_path(template)])
        try:
            data = self.tree.read(path)
        except KeyError as exc:
            raise jinja2.TemplateNotFound(template) from exc
        return data.decode("utf-8-sig"), path, lambda: True

    def list_templates(self) -> list[str]:
        """Return template names (paths below the folder), sorted."""
        prefix = self.folder + "/"
        return [p[len(prefix) :] for p in self.tree.paths() if p.startswith(prefix)]


def make_environment(
    tree: SourceTree,
    theme: str,
    config: SiteConfig,
    limits: LayoutLimits | None = None,
    *,
    check: bool = True,
) -> jinja2.Environment:
    """Return the sandboxed Jinja2 environment (:class:`~.sandbox.LayoutSandbox`, with
    ``limits``) for ``theme`` (``"default"`` or a source-tree folder). The bundled theme runs
    in the same sandbox: one set of rules for every layout.

    ``check=False``: the folder was checked already (:func:`.deferred.check_theme_folder`,
    when the environment is deferred; a check at first use would be a read of the tree
    listing recorded as the first page's).

    Raises:
        ConfigError: ``theme`` names no folder of the source tree (``render.theme``).
    """
    loader: jinja2.BaseLoader
    if theme == "default":
        loader = jinja2.FileSystemLoader(str(bundled_templates_dir()))
    else:
        if check:
            check_theme_folder(tree, theme)
        loader = SourceTreeLoader(tree, theme)
    env = LayoutSandbox(
        limits or LayoutLimits(),
        loader=loader,
        autoescape=jinja2.select_autoescape(["html", "htm", "xml"], default_for_string=True),
        keep_trailing_newline=True,
        bytecode_cache=COMPILED,
    )
    # Jekyll's filters, with the same code Liquid in posts uses (jekyll_filters), so a layout
    # and a post agree on relative_url, dates and the rest.
    site = {"baseurl": config.baseurl, "url": config.url, "timezone": ZoneInfo(config.timezone)}
    for name in JEKYLL_FILTERS:
        env.add_filter(name, _jinja_filter(FILTERS[name], site))
    return env


JEKYLL_FILTERS = (
    "relative_url",
    "absolute_url",
    "date",
    "date_to_xmlschema",
    "date_to_rfc822",
    "date_to_string",
    "date_to_long_string",
)
"""The Liquid filters layouts get too; the text ones (``escape``, ``default``…) stay
Jinja2's own, which know about autoescaping."""


def _jinja_filter(fn: Filter, site: Mapping[str, Any]) -> Callable[..., Any]:
    def apply(value: Any, *args: Any) -> Any:
        return fn(value, list(args), site)

    return apply


def choose_layout(
    env: jinja2.Environment, name: object, fallback: str, path: str
) -> tuple[jinja2.Template | None, RenderWarning | None]:
    """Return the template for front-matter ``layout: name`` of ``path``.

    ``name`` ``""`` (no ``layout`` key) -> the ``fallback`` (``"post"``/``"page"``);
    ``null``/``none``/``false`` -> no template. An unknown name gives a warning and the
    fallback. Raises ``jinja2.TemplateNotFound`` when the fallback is missing too.
    """
    if name is None or name is False or str(name).strip().lower() in NO_LAYOUT:
        return None, None
    if str(name).strip() == "":
        return env.get_template(f"{fallback}.html"), None
    wanted = str(name).strip()
    for candidate in ALIASES.get(wanted, (f"{wanted}.html",)):
        try:
            return env.get_template(candidate), None
        except jinja2.TemplateNotFound:
            continue
    message = f"unknown layout {wanted!r}: using {fallback!r}"
    return env.get_template(f"{fallback}.html"), RenderWarning(path, None, message)


def render_layout(template: jinja2.Template, content: str, context: Mapping[str, Any]) -> str:
    """Return ``template`` rendered with ``context`` plus ``content`` (trusted HTML).

    Raises as :func:`render_template`."""
    return render_template(template, {**context, "content": Markup(content)})


def render_template(template: jinja2.Template, variables: Mapping[str, Any]) -> str:
    """Render ``template`` with a fresh budget (:meth:`.LayoutSandbox.start_render`).

    Raises:
        SourceError: the layout ran past a limit (:class:`~.sandbox.LayoutLimitError`, or
            nesting deeper than Python's stack allows), did what the sandbox forbids
            (``jinja2.SecurityError``), or failed (an undefined value called, ``1/0``, a bad
            ``range``); the message names the layout file and line it happened in.
        jinja2.TemplateSyntaxError, jinja2.TemplateNotFound: from an ``{% include %}``; the
            caller names the document.
    """
    env = template.environment
    if isinstance(env, LayoutSandbox):
        env.start_render()
    try:
        return template.render(variables)
    except (DeploybotError, jinja2.TemplateSyntaxError, jinja2.TemplateNotFound, MemoryError):
        raise  # MemoryError: the page's (render.limits.out_of_memory), not the layout's
    except jinja2.TemplateError as exc:
        raise SourceError(f"layout failed: {one_line(exc)}", *_where(exc, template)) from exc
    except LayoutLimitError as exc:
        problem = f"layout ran past the render limit ({exc})"
        raise SourceError(problem, *_where(exc, template)) from exc
    except RecursionError as exc:
        problem = "layout ran past the render limit (nested deeper than Python allows"
        problem += ": an include or extends cycle?)"
        raise SourceError(problem, *_where(exc, template)) from exc
    except Exception as exc:  # a Python error in layout code: bad input, not a bot failure
        problem = f"layout failed: {type(exc).__name__}: {one_line(exc)}"
        raise SourceError(problem, *_where(exc, template)) from exc


def _where(exc: BaseException, template: jinja2.Template) -> tuple[str | None, int | None]:
    """Return the innermost template file and line in ``exc``'s traceback (Jinja2 rewrites
    it so template code shows as the template's file and line), else ``template``'s file."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if not frame.filename.endswith(".py") and not frame.filename.startswith("<"):
            return frame.filename, frame.lineno
    return template.filename or template.name, None
