"""The Jinja2 environment of a build, made at its first use.

Only a site without layouts of its own renders through Jinja2 (the bundled theme or
``render.theme``); a site with ``_layouts/`` or a Jekyll theme renders through Liquid and
never asks for it. Making the environment imports Jinja2 and the sandbox (about 220 M
instructions, a tenth of a one-post edit), so the render context carries this instead.
Importing this module imports no Jinja2.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from deploybot.render.read.source import SourceTree
from deploybot.support.errors import ConfigError

if TYPE_CHECKING:
    import jinja2


def check_theme_folder(tree: SourceTree, theme: str) -> None:
    """Check that ``render.theme`` names a folder of ``tree`` (``"default"``, the bundled
    theme, always passes), before any Jinja2 is made, so that the error does not wait for
    the first page. Raises ``ConfigError`` naming the folder."""
    if theme == "default":
        return
    folder = theme.strip("/") + "/"
    if not any(path.startswith(folder) for path in tree.paths()):
        raise ConfigError(
            f"render.theme: no folder {theme!r} in the source tree "
            '(use "default" for the bundled theme)'
        )


class DeferredEnvironment:
    """The environment ``make()`` returns, made once, at the first :meth:`get`."""

    def __init__(self, make: Callable[[], jinja2.Environment]) -> None:
        self._make = make
        self._env: jinja2.Environment | None = None

    def get(self) -> jinja2.Environment:
        """Return the environment, making it at the first call (raises what ``make`` raises:
        ``ConfigError`` for a ``render.theme`` folder the tree lacks)."""
        if self._env is None:
            self._env = self._make()
        return self._env

    @property
    def made(self) -> bool:
        """Whether :meth:`get` made the environment (a Liquid site's build never does)."""
        return self._env is not None
