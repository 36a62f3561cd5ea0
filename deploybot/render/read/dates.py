"""Dates as Jekyll reads and prints them, independent of the machine's TZ and locale.

Reading a front-matter ``date`` follows Jekyll 4.3 (Ruby's ``Time.parse``, :mod:`.rubytime`;
the date filters read theirs with the same parser:
:func:`deploybot.render.liquid.jekyll_filters.as_time`). Printing covers Liquid's
``date_to_xmlschema`` (RFC 3339), ``date_to_rfc822`` (RFC 822/2822) and a locale-free subset of
``strftime``.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, tzinfo
from email.utils import format_datetime

from deploybot.render.read import rubytime

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def front_matter_date(value: object, tz: tzinfo) -> datetime:
    """Return a front-matter ``date`` as Jekyll 4.3 reads it, in ``tz`` (the site's zone).

    Jekyll turns the YAML value into text and parses it with Ruby's ``Time.parse``
    (``Document#merge_date!``, ``Utils.parse_date``; :mod:`.rubytime`): a YAML date is
    midnight in the site's zone; a YAML timestamp without an offset
    (``2019-03-07 10:00:00``) is UTC, as Psych reads it, and keeps no fraction of a second
    (``Time#to_s`` drops it); any other text is ``Time.parse``'s (``3-7-2019`` is 3 July,
    ``2019-03-07 10:00`` is the site's local time). Raises ``ValueError`` for a value
    Jekyll refuses (or would complete from the clock: no year), and for a date that cannot
    be placed in ``tz`` (Python's ``datetime`` holds years 1 to 9999: ``0001-01-01 00:00
    +14:00`` is in year 0 once in UTC).
    """
    try:
        return _front_matter_date(value, tz)
    except OverflowError as exc:
        raise ValueError(f"date {value!s} is out of range in the site's timezone") from exc


def _front_matter_date(value: object, tz: tzinfo) -> datetime:
    if isinstance(value, datetime):
        moment = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return moment.replace(microsecond=0).astimezone(tz)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=tz).astimezone(tz)
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"not a date: {value!r}")
    text = str(value)
    try:
        return rubytime.parse_time(text, tz).astimezone(tz)
    except rubytime.DateParseError as exc:
        raise ValueError(f"not a date: {text!r} ({exc})") from exc


def xmlschema(moment: datetime) -> str:
    """``date_to_xmlschema``: ``YYYY-MM-DDTHH:MM:SS+hh:mm`` (RFC 3339; seconds precision)."""
    return moment.replace(microsecond=0).isoformat()


def rfc822(moment: datetime) -> str:
    """``date_to_rfc822``: ``Tue, 14 Jul 2020 09:12:02 -0700`` (RFC 2822 §3.3), English names.

    A naive ``moment`` is printed as UTC (``+0000``).
    """
    return format_datetime(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def _utc_offset(moment: datetime, colons: int) -> str:
    """``+hhmm`` (``colons`` 0), ``+hh:mm`` (1) or ``+hh:mm:ss`` (2): Ruby's ``%z``,
    ``%:z``, ``%::z``."""
    delta = moment.utcoffset() or timedelta(0)
    seconds = int(delta.total_seconds())
    sign = "-" if seconds < 0 else "+"
    hours, rest = divmod(abs(seconds), 3600)
    mins, secs = divmod(rest, 60)
    if colons == 0:
        return f"{sign}{hours:02d}{mins:02d}"
    return f"{sign}{hours:02d}:{mins:02d}" + (f":{secs:02d}" if colons == 2 else "")


_DIRECTIVE_RE = re.compile(r"%([-_0^#]*)(\d*)(:{1,2}z|[a-zA-Z%+])")
"""A directive of Ruby's ``Time#strftime``: flags, a width, then the conversion."""

_COMPOSITE = {
    "F": "%Y-%m-%d", "T": "%H:%M:%S", "D": "%m/%d/%y", "x": "%m/%d/%y", "X": "%H:%M:%S",
    "R": "%H:%M", "r": "%I:%M:%S %p", "c": "%a %b %e %H:%M:%S %Y", "v": "%e-%^b-%Y",
}  # fmt: skip
"""Conversions that stand for others (their width is ignored, as Ruby 3.1 ignores it)."""

_SPACE_PADDED = frozenset("ekl")
"""Numbers padded with spaces, not zeros, by default."""


def _number(moment: datetime, conversion: str) -> tuple[int, int] | None:
    """The value and default width of a numeric conversion; None for another."""
    iso = moment.isocalendar()
    numbers = {
        "Y": (moment.year, 4), "C": (moment.year // 100, 2), "y": (moment.year % 100, 2),
        "m": (moment.month, 2), "d": (moment.day, 2), "e": (moment.day, 2),
        "j": (moment.timetuple().tm_yday, 3), "H": (moment.hour, 2), "k": (moment.hour, 2),
        "I": ((moment.hour % 12) or 12, 2), "l": ((moment.hour % 12) or 12, 2),
        "M": (moment.minute, 2), "S": (moment.second, 2), "u": (moment.isoweekday(), 1),
        "w": (moment.isoweekday() % 7, 1), "U": (int(moment.strftime("%U")), 2),
        "W": (int(moment.strftime("%W")), 2), "V": (iso.week, 2), "G": (iso.year, 4),
        "g": (iso.year % 100, 2), "s": (int(moment.timestamp()), 1),
    }  # fmt: skip
    return numbers.get(conversion)


def _text(moment: datetime, conversion: str) -> str | None:
    """The text of an alphabetic conversion (English names, as Ruby's, no locale)."""
    texts = {
        "A": DAYS[moment.weekday()], "a": DAYS[moment.weekday()][:3],
        "B": MONTHS[moment.month - 1], "b": MONTHS[moment.month - 1][:3],
        "h": MONTHS[moment.month - 1][:3], "p": "AM" if moment.hour < 12 else "PM",
        "P": "am" if moment.hour < 12 else "pm", "Z": moment.tzname() or "",
        "n": "\n", "t": "\t", "%": "%",
    }  # fmt: skip
    return texts.get(conversion)


def _directive(moment: datetime, match: re.Match[str]) -> str:
    flags, width_text, conversion = match.groups()
    width = int(width_text) if width_text else None
    if conversion in _COMPOSITE:
        return strftime(moment, _COMPOSITE[conversion])
    if conversion in ("z", ":z", "::z"):
        return _utc_offset(moment, colons=len(conversion) - 1)
    if conversion in ("L", "N"):  # the fraction of the second, cut to ``width`` digits
        digits = width or (3 if conversion == "L" else 9)
        return f"{moment.microsecond:06d}000"[:digits].ljust(digits, "0")
    number = _number(moment, conversion)
    if number is not None:
        value, default = number
        pad = " " if conversion in _SPACE_PADDED else "0"
        pad = " " if "_" in flags else "0" if "0" in flags else pad
        return str(value) if "-" in flags else str(value).rjust(width or default, pad)
    text = _text(moment, conversion)
    if text is None:
        return match.group(0)  # not a directive Ruby knows: written as it is, as Ruby does
    if "#" in flags:
        text = text.lower() if conversion == "p" else text.upper()
    if "^" in flags:
        text = text.upper()
    if width is None or "-" in flags:
        return text
    return text.rjust(width, "0" if "0" in flags else " ")


def strftime(moment: datetime, fmt: str) -> str:
    """Format ``moment`` as Ruby 3.1's ``Time#strftime`` does, without locale (English
    names): every conversion (``%Y %C %y %m %B %b %h %d %e %j %H %k %I %l %P %p %M %S %L
    %N %z %:z %::z %Z %A %a %u %w %G %g %V %U %W %s %n %t %%`` and the combined ``%c %D %F
    %R %r %T %v %x %X``), with the flags ``- _ 0 ^ #`` and a width. An unknown directive
    (``%Q``, ``%E``) is left as written, as Ruby leaves it.
    """
    return _DIRECTIVE_RE.sub(lambda match: _directive(moment, match), fmt)
