"""jekyll-remote-theme 0.5: ``remote_theme: OWNER/NAME[@REF]`` in ``_config.yml``.

The plugin itself adds nothing to a build beyond the theme: it downloads the theme and sets
it as the site's theme before Jekyll reads the site. deploybot does that outside the
renderer: the watch stage fetches the theme with git (:mod:`deploybot.watch.theme`) and the
build reads it as a layer under the site's own files (:mod:`deploybot.render.read.layered`).
Listed here so that a site naming it in ``plugins:``, as GitHub Pages sites must, gets no
"not supported" warning for a plugin whose work is done.
"""

from __future__ import annotations

from deploybot.render.liquid.plugins.registry import Plugin

NAME = "jekyll-remote-theme"

PLUGIN = Plugin(NAME, "remote_theme: OWNER/NAME[@REF], fetched with git before the build")
