"""kramdown's syntax and output for mistune 3, one plugin per construct: attribute lists
(:mod:`.attrs`), heading ids (:mod:`.headings`), typography, tables, footnotes, definition
lists, abbreviations, math, block and span HTML, extensions, task lists and the table of
contents; :mod:`.plugins` bundles them in the order they must run.
"""
