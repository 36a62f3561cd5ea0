"""The theme a site renders with: the bundled or a source folder's Jinja2 layouts
(:mod:`.layouts`), run in a sandbox with a budget (:mod:`.sandbox`, :mod:`.budget`,
:mod:`.kinds`, :mod:`.measure`), or the site's own Liquid theme (:mod:`.site_theme`).
"""
