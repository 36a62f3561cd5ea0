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


def _utc_offset(moment: datetime, colon: bool) -> str:
    delta = moment.utcoffset() or timedelta(0)
    minutes = int(delta.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}{':' if colon else ''}{mins:02d}"


def _fields(moment: datetime) -> dict[str, str]:
    return {
        "a": DAYS[moment.weekday()][:3],
        "A": DAYS[moment.weekday()],
        "b": MONTHS[moment.month - 1][:3],
        "h": MONTHS[moment.month - 1][:3],
        "B": MONTHS[moment.month - 1],
        "d": f"{moment.day:02d}",
        "-d": str(moment.day),
        "e": f"{moment.day:2d}",
        "m": f"{moment.month:02d}",
        "-m": str(moment.month),
        "Y": f"{moment.year:04d}",
        "y": f"{moment.year % 100:02d}",
        "H": f"{moment.hour:02d}",
        "-H": str(moment.hour),
        "I": f"{(moment.hour % 12) or 12:02d}",
        "-I": str((moment.hour % 12) or 12),
        "p": "AM" if moment.hour < 12 else "PM",
        "M": f"{moment.minute:02d}",
        "S": f"{moment.second:02d}",
        "j": f"{moment.timetuple().tm_yday:03d}",
        "z": _utc_offset(moment, colon=False),
        ":z": _utc_offset(moment, colon=True),
        "Z": moment.tzname() or "",
        "%": "%",
    }


_STRFTIME_RE = re.compile(r"%(-?[a-zA-Z%]|:z)")


def strftime(moment: datetime, fmt: str) -> str:
    """Format ``moment`` like Ruby's ``strftime`` for the common directives, without locale.

    Supports ``%a %A %b %h %B %d %-d %e %m %-m %Y %y %H %-H %I %-I %p %M %S %j %z %:z %Z %%``;
    an unknown directive is left as written.
    """
    values = _fields(moment)
    return _STRFTIME_RE.sub(lambda m: values.get(m.group(1), m.group(0)), fmt)
