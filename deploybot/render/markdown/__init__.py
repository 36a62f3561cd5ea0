"""Markdown as Jekyll renders it: mistune 3 (:mod:`.renderer`) with the kramdown emulation
(:mod:`deploybot.render.markdown.kramdown`), and mistune's scanner made linear
(:mod:`.mistune_linear`, :mod:`.mistune_specs`).
"""
