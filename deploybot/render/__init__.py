"""The render stage: build a Jekyll-style site from a tree of blobs.

:func:`~deploybot.render.engine.build.build_site` reads ``_config.yml``, ``_posts/``, pages and
static files from a :class:`~deploybot.render.read.source.SourceTree` and returns every output
file as bytes; what the pipeline calls is :func:`~deploybot.render.engine.incremental.build_into`
(a full or an incremental build into an output sink, with the build cache). The folders, in the
order a page goes through them: :mod:`deploybot.render.read` (the source as Jekyll reads it,
into the site model of :mod:`.model`), :mod:`deploybot.render.markdown` (mistune and the
kramdown emulation), :mod:`deploybot.render.highlight` (Pygments), :mod:`deploybot.render.liquid`
(python-liquid with Jekyll's tags and filters, and the plugins: one file each, their
generated outputs too), :mod:`deploybot.render.theme` (the
Jinja2 layouts and their sandbox, or the site's own Liquid theme), :mod:`deploybot.render.outputs`
(the bundled feeds, sinks) and :mod:`deploybot.render.engine` (full, incremental and parallel
builds, the build cache). :mod:`.fingerprint` says what a build's output depends on besides
the source; :mod:`.limits` are the ``[render]`` size limits every part applies.

This file imports nothing: importing one module of the stage loads only what that module
needs (the no-op ``run-once`` reads :mod:`.fingerprint` before anything heavy is loaded).
"""
