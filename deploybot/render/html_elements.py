"""HTML's void elements (they have no end tag and no content), one list for every part of the
render stage that scans HTML.

Source: the HTML standard's list of void elements (WHATWG, "13.1.2 Elements"), with ``param``,
which it dropped in 2022 and browsers still treat as void. kramdown's parser
(``parser/html.rb``, ``HTML_ELEMENTS_WITHOUT_BODY``) adds two obsolete ones, ``command`` and
``keygen``: :data:`KRAMDOWN_WITHOUT_BODY`.
"""

from __future__ import annotations

VOID_ELEMENTS = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    }
)
"""The void elements of HTML (lower case)."""

KRAMDOWN_WITHOUT_BODY = VOID_ELEMENTS | {"command", "keygen"}
"""The elements kramdown's HTML parser reads without a body or an end tag."""
