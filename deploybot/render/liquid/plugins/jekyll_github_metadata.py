"""jekyll-github-metadata 2.15: ``site.github`` as far as a build knows it without GitHub's
API, and ``{% github_edit_link %}``.

The repository (``owner/name``) is ``_config.yml``'s ``repository`` (with a ``/``), else
the one ``[source] url`` names on github.com (``RenderOptions.repository``; the plugin reads
the ``origin`` remote there). From it come, as ``jekyll build`` gives them
(``repository.rb``, ``repository_compat.rb``, ``pages.rb``; Jekyll's development
environment, ``PAGES_ENV`` unset): ``repository_nwo``, ``repository_name``,
``project_title``, ``owner_name``, ``owner_url``, ``owner_gravatar_url``,
``repository_url``, ``clone_url``, ``releases_url``, ``zip_url``/``tar_url`` (of the
``gh-pages`` branch, ``master`` for a user page), ``is_user_page``/``is_project_page``,
``source``, ``url``/``baseurl`` (``https://github.com/pages/OWNER/NAME``), ``hostname``,
``pages_hostname``, ``api_url``, ``help_url``, ``environment``/``pages_env``, and
``versions`` (``{}``). A ``github`` mapping in ``_config.yml`` is merged over them, and a
site without ``title`` (nor ``name``) is titled by the repository's name.

What only GitHub's API knows is ``null`` (or an empty list), as the plugin gives it
offline, and named in one warning: :data:`API_FIELDS`. Without a repository there is no
``site.github`` and a warning (Jekyll stops when a page reads it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from deploybot.render.liquid.plugins.registry import Plugin
from deploybot.render.model import RenderWarning, SiteConfig
from deploybot.render.read.defaults import deep_merge
from deploybot.render.read.siteconfig import CONFIG_PATH, line_of_keys

NAME = "jekyll-github-metadata"
GITHUB = "https://github.com"
_REMOTE = re.compile(r"github\.com(:|/)([\w-]+)/([\w.-]+)")
API_FIELDS = (
    "build_revision",
    "contributors",
    "issues_url",
    "language",
    "latest_release",
    "license",
    "organization_members",
    "owner",
    "owner_display_name",
    "private",
    "project_tagline",
    "public_repositories",
    "releases",
    "show_downloads",
    "wiki_url",
    "archived",
    "disabled",
)
"""``site.github`` fields only GitHub's API (or the build's git checkout) gives."""
API_WARNING = "site.github: deploybot does not ask GitHub's API, so these are empty: " + ", ".join(
    sorted(API_FIELDS)
)
NO_REPOSITORY = (
    "site.github: no repository: set 'repository: OWNER/NAME' in _config.yml "
    "(or publish from a github.com source)"
)


def nwo_of_url(url: str) -> str:
    """Return ``owner/name`` of a github.com remote URL (``https://github.com/o/n.git``,
    ``git@github.com:o/n.git``), '' for another URL (the plugin's ``github_remote_regex``)."""
    text = url[:-4] if url.endswith(".git") else url
    m = _REMOTE.search(text)
    return f"{m[2]}/{m[3]}" if m else ""


def repository_of(config: SiteConfig, source_nwo: str) -> str:
    """Return the repository ``owner/name`` (``_config.yml``'s ``repository``, else
    ``source_nwo``), '' when there is none."""
    given = config.data.get("repository")
    if isinstance(given, str) and "/" in given:
        return given
    return source_nwo


def metadata(nwo: str) -> dict[str, Any]:
    """Return ``site.github`` for the repository ``nwo`` (keys sorted, as the drop's)."""
    owner, name = nwo.split("/")[0], nwo.split("/")[-1]
    user_page = name.lower() in (f"{owner}.github.io".lower(), f"{owner}.github.com".lower())
    repository = f"{GITHUB}/{owner}/{name}"
    branch = "master" if user_page else "gh-pages"
    url = f"{GITHUB}/pages/{owner if user_page else nwo}"
    found: dict[str, Any] = dict.fromkeys(API_FIELDS)
    found.update(
        {
            "api_url": "https://api.github.com",
            "baseurl": url[len(GITHUB) :],
            "clone_url": f"{repository}.git",
            "contributors": [],
            "environment": "development",
            "help_url": "https://help.github.com",
            "hostname": "github.com",
            "is_project_page": not user_page,
            "is_user_page": user_page,
            "organization_members": None,
            "owner_gravatar_url": f"{GITHUB}/{owner}.png",
            "owner_name": owner,
            "owner_url": f"{GITHUB}/{owner}",
            "pages_env": "development",
            "pages_hostname": "localhost:4000",
            "project_title": name,
            "public_repositories": [],
            "releases": [],
            "releases_url": f"{repository}/releases",
            "repository_name": name,
            "repository_nwo": nwo,
            "repository_url": repository,
            "source": {"branch": branch, "path": "/"},
            "tar_url": f"{repository}/tarball/{branch}",
            "url": url,
            "versions": {},
            "zip_url": f"{repository}/zipball/{branch}",
        }
    )
    return dict(sorted(found.items()))


def adjust_config(config: SiteConfig, source_nwo: str) -> tuple[SiteConfig, list[RenderWarning]]:
    """Return ``config`` with ``site.github`` (and the title fallback), and the warnings."""
    nwo = repository_of(config, source_nwo)
    line = line_of_keys(config.text, ("plugins",))
    if not nwo:
        return config, [RenderWarning(CONFIG_PATH, line, NO_REPOSITORY)]
    given = config.data.get("github")
    found: Any = metadata(nwo)
    if isinstance(given, Mapping):
        found = deep_merge(found, given)
    elif given is not None:
        found = given
    data = {**config.data, "github": found}
    title = config.title
    if config.data.get("title") is None and config.data.get("name") is None:
        title = nwo.split("/")[-1]
        data["title"] = title
    return replace(config, data=data, title=title), [RenderWarning(CONFIG_PATH, line, API_WARNING)]


_LINK_TEXT = re.compile(r"(?:\"(.*)\"|'(.*)')")


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def edit_link(markup: str, site: Mapping[str, Any], page: Mapping[str, Any]) -> str | None:
    """Return ``{% github_edit_link ["text"] %}``: the URL to edit ``page`` on GitHub (a
    link when the markup gives a text), ``None`` when ``site.github`` lacks what it needs."""
    github = _mapping(site.get("github"))
    source = _mapping(github.get("source"))
    parts = [github.get("repository_url"), "edit/", source.get("branch"), source.get("path")]
    parts.append(page.get("path"))
    if any(p is None for p in parts):
        return None
    pieces = []
    for i, part in enumerate(str(p) for p in parts):
        part = part[1:] if part.startswith("/") else part
        if i < len(parts) - 1 and not part.endswith("/"):
            part += "/"
        pieces.append("" if part == "/" else part)
    url = "".join(pieces)
    m = _LINK_TEXT.search(markup)
    text = (m[1] if m[1] is not None else m[2]) if m else None
    return f'<a href="{url}">{text}</a>' if text is not None else url


def _tags() -> Sequence[type[Any]]:
    from deploybot.render.liquid.tags import TagCall, simple_tag

    def render(call: TagCall) -> str:
        site, page = call.resolve("site"), call.resolve("page")
        found = edit_link(
            call.markup,
            site if isinstance(site, Mapping) else {},
            page if isinstance(page, Mapping) else {},
        )
        if found is None:
            call.state.warn(None, "{% github_edit_link %}: site.github lacks the repository")
            return ""
        return found

    return [simple_tag("github_edit_link", render)]


PLUGIN = Plugin(
    NAME,
    "site.github (what a build knows without GitHub's API) and {% github_edit_link %}",
    tags=_tags,
    config=adjust_config,
)
