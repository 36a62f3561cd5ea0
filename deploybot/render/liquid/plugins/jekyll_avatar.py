"""jekyll-avatar 0.7: ``{% avatar USER [size=N] [lazy=true] %}`` and ``{% avatar user=VAR %}``.

The tag (``jekyll-avatar.rb``) writes GitHub's avatar of a user as an ``<img>``: ``src`` on
``avatarsN.githubusercontent.com`` (N the CRC-32 of the path, modulo 4), ``srcset`` at
scales 1-4, ``width``/``height`` the size (40 by default; ``avatar-small`` below 48),
``data-proofer-ignore``; ``lazy=true`` moves ``src``/``srcset`` to ``data-src``/
``data-srcset``. The markup is Liquid first (``{% avatar {{ page.author }} %}``); the size
and ``user=`` are read from it as written. ``PAGES_AVATARS_URL`` (another host) is not read.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from deploybot.render.liquid import jekyll_filters as jf
from deploybot.render.liquid.plugins.registry import Plugin

NAME = "jekyll-avatar"
SERVERS = 4
DEFAULT_SIZE = "40"
API_VERSION = "3"
_SIZE = re.compile(r"\bsize=(\d+)\b", re.I)
_USER = re.compile(r"\buser=([\w.]+)\b")


def user_variable(markup: str) -> str | None:
    """Return the variable ``user=`` names in the tag's markup, if any."""
    m = _USER.search(markup.strip())
    return m[1] if m else None


def avatar(text: str, markup: str, user: str | None = None) -> str:
    """Return the ``<img>`` for the rendered markup ``text`` (``markup``: as written;
    ``user``: the value of its ``user=`` variable, when it names one)."""
    m = _SIZE.search(markup.strip())
    size = m[1] if m else DEFAULT_SIZE
    if user is None:
        name = text.split(" ")[0] if " " in text else text
        user = name.replace("@", "", 1) if name.startswith("@") else name

    def path(scale: int = 1) -> str:
        return f"{user}?v={API_VERSION}&s={size if scale == 1 else int(size) * scale}"

    host = f"https://avatars{zlib.crc32(path().encode()) % SERVERS}.githubusercontent.com"
    srcset = ", ".join(f"{host}/{path(s)} {s}x" for s in range(1, 5))
    attributes = {
        "class": "avatar avatar-small" if int(size) < 48 else "avatar",
        "alt": user,
        "width": size,
        "height": size,
        "data-proofer-ignore": "true",
    }
    if "lazy=true" in text:
        attributes.update({"src": "", "data-src": f"{host}/{path()}", "data-srcset": srcset})
    else:
        attributes.update({"src": f"{host}/{path()}", "srcset": srcset})
    return "<img " + " ".join(f'{k}="{v}"' for k, v in attributes.items()) + " />"


def _lookup(resolve: Any, variable: str) -> str:
    """The plugin's ``lookup_variable``: the dotted ``variable``'s value, or its name."""
    head, *rest = variable.split(".")
    value = resolve(head)
    for key in rest:
        value = value.get(key) if isinstance(value, Mapping) else None
    return jf.to_text(value) if value is not None else variable


def _tags() -> Sequence[type[Any]]:
    from deploybot.render.liquid.tags import TagCall, render_markup, simple_tag

    def render(call: TagCall) -> str:
        markup = call.markup
        text = render_markup(call.context, markup.strip())
        variable = user_variable(markup)
        user = None if variable is None else _lookup(call.resolve, variable)
        return avatar(text, markup, user)

    return [simple_tag("avatar", render)]


PLUGIN = Plugin(NAME, "{% avatar USER %}: a GitHub user's avatar image", tags=_tags)
