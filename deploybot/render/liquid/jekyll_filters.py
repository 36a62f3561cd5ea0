"""Jekyll's own filters on plain values: URLs, dates, text (shared by Liquid and the Jinja2 theme).

Each function follows Jekyll 4.3's code: ``lib/jekyll/filters.rb`` (text, ``slugify`` via
``utils.rb``), ``filters/url_filters.rb`` and ``filters/date_filters.rb``. They take plain
values (strings, numbers, datetimes, lists, mappings) and the site's ``url``/``baseurl``;
nothing here reaches a Python object's attributes. :data:`FILTERS` gives the URL and date
filters in the ``fn(value, args, site)`` form the Jinja2 theme registers.
"""

from __future__ import annotations

import html
import json
import math
import re
import unicodedata
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, tzinfo
from decimal import Decimal
from typing import Any
from urllib.parse import quote, quote_plus

from deploybot.render.read import rubytime, slugs
from deploybot.render.read.dates import rfc822, strftime, xmlschema

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# Addressable::URI.normalize_component keeps RFC 3986's reserved and unreserved characters.
_URI_SAFE = "!#$&'()*+,/:;=?@[]~%-._"


def to_text(value: Any) -> str:
    """Return ``value`` as Ruby's ``to_s`` prints it in Liquid output (``nil`` -> '',
    ``true``/``false``, a float as :func:`ruby_float`, a list joined, a time as
    ``2020-07-14 00:00:00 -0700``, a mapping as Ruby's ``Hash#to_s``: :func:`ruby_inspect`).

    Never Python's ``repr``: the source repository is untrusted, and an object with no text
    of its own (no ``__str__`` but ``object``'s) prints nothing, as an unknown value does.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return ruby_float(value)
    if isinstance(value, datetime):
        return strftime(value, "%Y-%m-%d %H:%M:%S %z")
    if isinstance(value, list | tuple):
        return "".join(to_text(v) for v in value)
    if isinstance(value, Mapping):
        return ruby_inspect(value)
    if isinstance(value, str | int | Decimal | date) or _own_text(value):
        return str(value)
    return ""  # its str() would be its repr


def _own_text(value: object) -> bool:
    """True when a class of ``value`` other than ``object`` defines ``__str__``."""
    return any("__str__" in vars(cls) for cls in type(value).__mro__[:-1])


# Ruby's String#inspect (string.c, rb_str_inspect): these escapes, "#" before "{", "$" or
# "@" escaped, other characters as they are when printable (Onigmo's [[:print:]]: all but
# controls, surrogates, unassigned and the line and paragraph separators), else \uXXXX.
_RUBY_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\f": "\\f",
    "\v": "\\v",
    "\b": "\\b",
    "\a": "\\a",
    "\x1b": "\\e",
}
_NOT_PRINTED = frozenset({"Cc", "Cs", "Cn", "Zl", "Zp"})


def ruby_inspect(value: Any) -> str:
    """Return ``value`` as Ruby 3.1's ``inspect`` writes it (Jekyll 4.3.1's Ruby): strings
    quoted and escaped, ``nil``, ``true``, a time as its ``to_s``, a date as
    ``#<Date: 2020-01-01 ((2458850j,0s,0n),+0s,2299161j)>``, ``[a, b]``, ``{k=>v}``; a
    list or mapping inside itself (a YAML alias) is ``[...]`` / ``{...}`` as in Ruby."""
    return _inspect(value, set())


def _inspect(value: Any, open_ids: set[int]) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool | float | datetime):
        return to_text(value)
    if isinstance(value, int | Decimal):
        return str(value)
    if isinstance(value, date):
        julian_day = value.toordinal() + 1_721_425
        return f"#<Date: {value.isoformat()} (({julian_day}j,0s,0n),+0s,2299161j)>"
    if isinstance(value, Mapping):
        return _inspect_inside(value, "{...}", open_ids)
    if isinstance(value, list | tuple):
        return _inspect_inside(value, "[...]", open_ids)
    return _ruby_string(value if isinstance(value, str) else to_text(value))


def _inspect_inside(
    value: Mapping[Any, Any] | list[Any] | tuple[Any, ...], again: str, open_ids: set[int]
) -> str:
    if id(value) in open_ids:
        return again
    open_ids.add(id(value))
    try:
        if isinstance(value, Mapping):
            pairs = (f"{_inspect(k, open_ids)}=>{_inspect(v, open_ids)}" for k, v in value.items())
            return "{" + ", ".join(pairs) + "}"
        return "[" + ", ".join(_inspect(v, open_ids) for v in value) + "]"
    finally:
        open_ids.discard(id(value))


def _ruby_string(text: str) -> str:
    out = ['"']
    for i, ch in enumerate(text):
        if ch in _RUBY_ESCAPES:
            out.append(_RUBY_ESCAPES[ch])
        elif ch == "#" and text[i + 1 : i + 2] in ("{", "$", "@"):
            out.append("\\#")
        elif unicodedata.category(ch) not in _NOT_PRINTED:
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\u{code:04X}" if code < 0x10000 else f"\\u{{{code:X}}}")
    out.append('"')
    return "".join(out)


def ruby_float(value: float) -> str:
    """Return ``value`` as Ruby's ``Float#to_s`` prints it (``numeric.c``, ``flo_to_s``):
    the shortest digits that read back as ``value`` (as Python's ``repr``), written out
    when the decimal point falls from 0.0001 up to 15 integer digits (``100.0``,
    ``0.0001``), else as ``1.5e+15``/``1.0e-05``; ``NaN``, ``Infinity``, ``-Infinity``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0.0"
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    point = len(digit_tuple) + int(exponent)  # digits before the decimal point
    if -4 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if 0 < point <= 15:
        whole = digits[:point].ljust(point, "0")
        return f"{sign}{whole}.{digits[point:] or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}e{point - 1:+03d}"


def relative_url(value: Any, base: str) -> str:
    """Jekyll's ``relative_url``: ``baseurl`` + the path, each with one leading ``/``;
    an absolute URL (with a scheme) is returned as it is; ``nil`` stays ``nil`` ('')."""
    if value is None:
        return ""
    path = to_text(value)
    if _SCHEME.match(path):
        return path
    parts = [base.rstrip("/"), path]
    joined = "".join(p if (not p or p.startswith("/")) else "/" + p for p in parts)
    return quote(joined, safe=_URI_SAFE)


def absolute_url(value: Any, url: str, base: str) -> str:
    """Jekyll's ``absolute_url``: the site ``url`` + :func:`relative_url` (no ``url``: the
    relative URL)."""
    if value is None:
        return ""
    text = to_text(value)
    if _SCHEME.match(text):
        return text
    return url.rstrip("/") + relative_url(text, base) if url else relative_url(text, base)


_DIGITS = re.compile(r"[0-9]+")


def as_time(value: Any, tz: tzinfo) -> datetime | None:
    """Return ``value`` as an aware datetime the way Liquid 5.4's ``Utils.to_date`` reads
    it in a build (Jekyll sets ``TZ`` to the site's zone ``tz``), else ``None``.

    A datetime as it is (one without an offset is a YAML timestamp: UTC, as Psych reads
    it, shown in ``tz``); a date at midnight UTC (Ruby's ``Date#strftime`` prints
    ``+0000``); an integer or a string of digits as seconds since the epoch in ``tz``
    (``Time.at``); other text by Ruby's ``Time.parse`` in ``tz``
    (:mod:`deploybot.render.read.rubytime`; text without a year, which Ruby completes
    from the clock, is refused; ``now``/``today`` are the build's time, which the Liquid
    filters put in their place: :func:`deploybot.render.liquid.filters._zoned`). Floats,
    booleans and the rest are no date, as in Liquid."""
    try:
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=UTC).astimezone(tz)
        if isinstance(value, date):
            return datetime(value.year, value.month, value.day, tzinfo=UTC)
        if isinstance(value, str) and _DIGITS.fullmatch(value):
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return datetime.fromtimestamp(value, tz)
        if isinstance(value, str) and value:
            return rubytime.parse_time(value, tz)
    except (ValueError, OverflowError, OSError):  # DateParseError, or out of Python's range
        return None
    return None


def local_time(value: Any, tz: tzinfo) -> datetime | None:
    """Return ``value`` as Jekyll's date filters read it (``Filters::DateFilters#time``:
    :func:`as_time`, then ``to_time.localtime``): in the site's zone ``tz``, a date at its
    local midnight; ``None`` when it is no date (Jekyll stops the build there; deploybot
    prints the value unchanged)."""
    try:
        if isinstance(value, date) and not isinstance(value, datetime):
            return datetime(value.year, value.month, value.day, tzinfo=tz)
        moment = as_time(value, tz)
        return None if moment is None else moment.astimezone(tz)
    except OverflowError:  # a moment at the end of Python's years, moved into tz
        return None


def date_format(value: Any, fmt: Any, *, tz: tzinfo) -> Any:
    """Liquid's ``date: FORMAT`` (Ruby ``strftime``) with dates read in the site's zone
    ``tz``; a value that is no date, or an empty format, is returned unchanged."""
    moment = as_time(value, tz)
    if moment is None or fmt is None or to_text(fmt) == "":
        return value
    return strftime(moment, to_text(fmt))


def _ordinal(day: int) -> str:
    if 11 <= day <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def date_string(value: Any, month: str, kind: Any = None, style: Any = None, *, tz: tzinfo) -> Any:
    """``date_to_string`` (``month`` ``%b``) / ``date_to_long_string`` (``%B``), with
    Jekyll's ``"ordinal"`` type and ``"US"`` style, in the site's zone ``tz``."""
    moment = local_time(value, tz)
    if moment is None:
        return value
    if kind == "ordinal":
        day = f"{moment.day}{_ordinal(moment.day)}"
        pattern = f"{month} {day}, %Y" if style == "US" else f"{day} {month} %Y"
        return strftime(moment, pattern)
    return strftime(moment, f"%d {month} %Y")


def date_to_xmlschema(value: Any, *, tz: tzinfo) -> Any:
    """Jekyll's ``date_to_xmlschema`` (``2020-07-14T00:00:00-07:00``) in the site's zone."""
    moment = local_time(value, tz)
    return value if moment is None else xmlschema(moment)


def date_to_rfc822(value: Any, *, tz: tzinfo) -> Any:
    """Jekyll's ``date_to_rfc822`` (``Tue, 14 Jul 2020 00:00:00 -0700``) in the site's
    zone."""
    moment = local_time(value, tz)
    return value if moment is None else rfc822(moment)


def xml_escape(value: Any) -> str:
    """Jekyll's ``xml_escape``: Ruby's ``encode(xml: :attr)`` without the quotes."""
    text = to_text(value)
    return html.escape(text, quote=True).replace("&#x27;", "&apos;")


def cgi_escape(value: Any) -> str:
    """Jekyll's ``cgi_escape`` (Ruby's ``CGI.escape``: space as ``+``)."""
    return quote_plus(to_text(value), safe="~")


def uri_escape(value: Any) -> str:
    """Jekyll's ``uri_escape`` (Addressable's ``normalize_component``: reserved characters
    kept, the rest percent-encoded as UTF-8)."""
    return quote(to_text(value), safe=_URI_SAFE)


def normalize_whitespace(value: Any) -> str:
    """Jekyll's ``normalize_whitespace``: runs of whitespace -> one space, ends stripped."""
    return " ".join(to_text(value).split())


_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"


def number_of_words(value: Any, mode: Any = None) -> int:
    """Jekyll's ``number_of_words`` (``"cjk"``: each CJK character is a word; ``"auto"``:
    so only when the text has one)."""
    text = to_text(value)
    cjk = len(re.findall(f"[{_CJK}]", text))
    words = len(re.findall(rf"[^{_CJK}\s]+", text))
    if mode == "cjk" or (mode == "auto" and cjk):
        return cjk + words
    return len(text.split())


def array_to_sentence_string(value: Any, connector: Any = "and") -> str:
    """Jekyll's ``array_to_sentence_string`` (``a, b, and c``)."""
    items = [to_text(v) for v in value] if isinstance(value, list | tuple) else [to_text(value)]
    word = to_text(connector)
    if len(items) <= 1:
        return items[0] if items else ""
    if len(items) == 2:
        return f"{items[0]} {word} {items[1]}"
    return f"{', '.join(items[:-1])}, {word} {items[-1]}"


def slugify(value: Any, mode: Any = None, cased: bool = False) -> str:
    """Jekyll's ``Utils.slugify`` (:func:`deploybot.render.read.slugs.slugify`)."""
    return slugs.slugify(to_text(value), None if mode is None else str(mode), bool(cased))


def jsonify(value: Any) -> str:
    """Jekyll's ``jsonify`` (Ruby's ``to_json``: compact, non-ASCII as is, ``/`` kept)."""
    return json.dumps(_plain(value), ensure_ascii=False, separators=(",", ":"))


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return strftime(value, "%Y-%m-%d %H:%M:%S %z")
    if isinstance(value, date):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return to_text(value)


def inspect(value: Any) -> str:
    """Jekyll's ``inspect``: ``xml_escape(input.inspect)``, Ruby's ``inspect`` as
    :func:`ruby_inspect` writes it (what a printed mapping shows too)."""
    return xml_escape(ruby_inspect(value))


Filter = Callable[[Any, list[Any], Mapping[str, Any]], Any]
"""``fn(value, args, site)``: a filter for the Jinja2 theme (``site`` has ``url``/``baseurl``)."""


def _site(site: Mapping[str, Any], key: str) -> str:
    return str(site.get(key) or "")


def _zone(site: Mapping[str, Any]) -> tzinfo:
    zone = site.get("timezone")
    return zone if isinstance(zone, tzinfo) else UTC


FILTERS: Mapping[str, Filter] = {
    "relative_url": lambda v, a, s: relative_url(v, _site(s, "baseurl")),
    "absolute_url": lambda v, a, s: absolute_url(v, _site(s, "url"), _site(s, "baseurl")),
    "date": lambda v, a, s: date_format(v, a[0], tz=_zone(s)) if a else to_text(v),
    "date_to_xmlschema": lambda v, a, s: date_to_xmlschema(v, tz=_zone(s)),
    "date_to_rfc822": lambda v, a, s: date_to_rfc822(v, tz=_zone(s)),
    "date_to_string": lambda v, a, s: date_string(v, "%b", *a[:2], tz=_zone(s)),
    "date_to_long_string": lambda v, a, s: date_string(v, "%B", *a[:2], tz=_zone(s)),
}
"""The Jekyll filters the Jinja2 theme gets, as ``fn(value, args, site)`` (``site`` has
``url``, ``baseurl`` and ``timezone``, the site's zone as a ``tzinfo``)."""
