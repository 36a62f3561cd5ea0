"""Liquid as Jekyll runs it: python-liquid (:mod:`.environment`) with Jekyll's tags
(:mod:`.tags`), filters (:mod:`.filters`, over the plain functions of
:mod:`.jekyll_filters`, which the Jinja2 theme shares) and link look-ups (:mod:`.links`);
:mod:`.templates` renders pages and includes, :mod:`.layouts` the site's own ``_layouts/``,
:mod:`.excerpt` a post's excerpt. Jekyll plugins live in :mod:`deploybot.render.liquid.plugins`.
"""
