"""Ruby's ``Time.parse``, as Jekyll's ``Utils.parse_date`` reads a front-matter ``date``.

Jekyll 4.3 turns every ``date`` value into text and hands it to ``Time.parse(text).localtime``
(``lib/jekyll/utils.rb``), so what a site may write is whatever Ruby's ``Date._parse``
(``ext/date/date_parse.c``, the default, non-"tight" parser) finds in the text, completed by
``Time.make_time`` (``lib/time.rb``). This module follows both:

- the text is scanned by sub-parsers in Ruby's order, each removing what it read: a weekday
  name; a time (``10:00``, ``10:00:00.5``, ``10am``, ``10h30``, with ``am``/``pm``) and the
  zone after it; then the first of: ``7 March 2019``/``3rd Mar 2019`` (eu), ``March 7, 2019``
  (us), ``2019-03-07``/``3-7-2019`` (iso), ``H31.03.07`` (Japanese eras), ``07-Mar-2019``
  (vms), ``2019/03/07``/``03/07/2019`` (slashes), ``7.3.2019`` (dots), ISO 8601's week and
  ordinal forms, ``'19``, a month name alone, ``7th``, runs of digits (``20190307``,
  ``20190307T100000``); then ``BC`` and a lone day or hour number;
- three numbers are ordered by Ruby's ``s3e`` rule: a number of more than two digits (or
  written ``'19``) is the year, and ``a-b-c``/``a/b/c`` with the year last is day, month,
  year (``3-7-2019`` is 3 July; ``12-31-2019`` is refused: month 31);
- a two-digit year is completed: 69..99 -> 19xx, 0..68 -> 20xx;
- the zone is Ruby's ``Time.zone_offset``: ``+01``, ``+0100``, ``-05:00``, ``UTC``/``Z``/
  ``GMT``/``UT``, the US zones (``EST``...``PDT``), military letters, and the site
  timezone's own abbreviations (``CET``/``CEST`` for Europe/Berlin); any other zone is
  ignored and the time is the site's local time, as ``Time.local`` reads it;
- out-of-range fields are refused as Ruby refuses them (month 13, hour 25, minute 60), and a
  day past the month's end runs on into the next month as ``Time.local`` does
  (``2019-02-30`` is 2 March); hour 24 and second 60 carry over.

Where Ruby would fill missing leading fields (the year, or the whole date for a bare time)
from the clock at build time, the date is refused: the output must follow from the source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Any

from deploybot.support.lazy_regex import LazyPattern

ABBR_DAYS = "sun|mon|tue|wed|thu|fri|sat"
ABBR_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
_MONTHS = ABBR_MONTHS.split("|")
_FLAGS = re.IGNORECASE | re.ASCII

# Time::ZoneOffset (lib/time.rb): hours east of UTC.
ZONE_HOURS: dict[str, int] = {
    "UTC": 0, "Z": 0, "UT": 0, "GMT": 0,
    "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
    **{letter: i + 1 for i, letter in enumerate("ABCDEFGHIKLM")},
    **{letter: -(i + 1) for i, letter in enumerate("NOPQRSTUVWXY")},
}  # fmt: skip


class DateParseError(ValueError):
    """The text is not a date Ruby's ``Time.parse`` reads (the message says why)."""


@dataclass
class _Scan:
    """The text being scanned (each sub-parser blanks what it read) and the fields found."""

    text: str
    found: dict[str, Any] = field(default_factory=dict)

    def sub(self, pattern: LazyPattern) -> re.Match[str] | None:
        """Find ``pattern``; blank its match to one space (Ruby's ``subx``)."""
        m = pattern.search(self.text)
        if m is not None:
            self.text = self.text[: m.start()] + " " + self.text[m.end() :]
        return m


def _compile(source: str, flags: int = _FLAGS) -> LazyPattern:
    """Date._parse's patterns are compiled at their first use: most sites' dates are read
    by YAML, and this module is imported by every build (:mod:`deploybot.support.lazy_regex`)."""
    return LazyPattern(source, flags)


_NOISE = _compile(r"[^-+',./:@A-Za-z0-9\[\]]+", re.ASCII)
_DAY = _compile(rf"\b({ABBR_DAYS})[^-/\d\s]*")
_TIME = _compile(
    r"((?:\d+\s*:\s*\d+(?:\s*:\s*\d+(?:[,.]\d*)?)?|\d+\s*h(?:\s*\d+m?(?:\s*\d+s?)?)?)"
    r"(?:\s*[ap](?:m\b|\.m\.))?|\d+\s*[ap](?:m\b|\.m\.))"
    r"(?:\s*((?:gmt|utc?)?[-+]\d+(?:[,.:]\d+(?::\d+)?)?"
    r"|(?-i:[A-Za-z.\s]+)(?:standard|daylight)\stime\b|(?-i:[A-Za-z]+)(?:\sdst)?\b))?"
)
_TIME_PARTS = _compile(
    r"\A(\d+)h?(?:\s*:?\s*(\d+)m?(?:\s*:?\s*(\d+)(?:[,.](\d+))?s?)?)?"
    r"(?:\s*([ap])(?:m\b|\.m\.))?"
)
_ERA = r"(c(?:e|\.e\.)|b(?:ce|\.c\.e\.)|a(?:d|\.d\.)|b(?:c|\.c\.))?"
_EU = _compile(
    rf"('?\d+)[^-\d\s]*\s*({ABBR_MONTHS})[^-\d\s']*"
    rf"(?:\s*{_ERA}\s*('?-?\d+(?:(?:st|nd|rd|th)\b)?))?"
)
_US = _compile(rf"\b({ABBR_MONTHS})[^-\d\s']*\s*('?\d+)[^-\d\s']*(?:\s*,?\s*{_ERA}\s*('?-?\d+))?")
_ISO = _compile(r"('?[-+]?\d+)-(\d+)-('?-?\d+)", re.ASCII)
_JIS = _compile(r"\b([mtsh])(\d+)\.(\d+)\.(\d+)")
_VMS11 = _compile(rf"('?-?\d+)-({ABBR_MONTHS})[^-/.]*-('?-?\d+)")
_VMS12 = _compile(rf"\b({ABBR_MONTHS})[^-/.]*-('?-?\d+)(?:-('?-?\d+))?")
_SLA = _compile(r"('?-?\d+)/\s*('?\d+)(?:\D\s*('?-?\d+))?")
_DOT = _compile(r"('?-?\d+)\.\s*('?\d+)\.\s*('?-?\d+)")
_ISO21 = _compile(r"\b(\d{2}|\d{4})?-?w(\d{2})(?:-?(\d))?\b")
_ISO22 = _compile(r"-w-(\d)\b")
_ISO23 = _compile(r"--(\d{2})?-(\d{2})\b", re.ASCII)
_ISO24 = _compile(r"--(\d{2})(\d{2})?\b", re.ASCII)
_ISO25_NOT = _compile(r"[,.](\d{2}|\d{4})-\d{3}\b", re.ASCII)
_ISO25 = _compile(r"\b(\d{2}|\d{4})-(\d{3})\b", re.ASCII)
_ISO26_NOT = _compile(r"\d-\d{3}\b", re.ASCII)
_ISO26 = _compile(r"\b-(\d{3})\b", re.ASCII)
_YEAR = _compile(r"'(\d+)\b", re.ASCII)
_MON = _compile(rf"\b({ABBR_MONTHS})\S*")
_MDAY = _compile(r"(\d+)(st|nd|rd|th)\b")
_DDD = _compile(
    r"([-+]?)(\d{2,14})(?:\s*t?\s*(\d{2,6})?(?:[,.](\d*))?)?"
    r"(?:\s*(z\b|[-+]\d{1,4}\b|\[[-+]?\d[^\]]*\]))?"
)
_BC = _compile(r"\b(bc\b|bce\b|b\.c\.|b\.c\.e\.)")
_FRAG = _compile(r"\A\s*(\d{1,2})\s*\Z")
_GENGO = {"m": 1867, "t": 1911, "s": 1925, "h": 1988}


def _month(name: str) -> int:
    return _MONTHS.index(name[:3].lower()) + 1


def _digits_from(text: str, signed: bool) -> str | None:
    """The first (optionally signed) run of digits in ``text``, skipping a prefix."""
    m = re.search(r"[-+]?\d+" if signed else r"\d+", text)
    return None if m is None else m.group(0)


def _s3e(scan: _Scan, y: str | None, m: str | None, d: str | None, bc: bool) -> None:
    """Ruby's ``s3e``: decide which of three numbers is the year, month and day."""
    if y is not None and m is not None and d is None:
        y, m, d = d, y, m
    if y is None:
        if d is not None and len(d) > 2:
            y, d = d, None
        if d is not None and d.startswith("'"):
            y, d = d, None
    if y is not None:
        m_y = re.search(r"[-+\d]", y)
        if m_y is not None:
            run = re.match(r"[-+]?\d*", y[m_y.start() :])
            assert run is not None
            if m_y.start() + run.end() < len(y):  # trailing text: the day, not the year
                y, d = d, run.group(0)
    if m is not None and (m.startswith("'") or len(m) > 2):
        y, m, d = m, d, y
    if d is not None and (d.startswith("'") or len(d) > 2):
        y, d = d, y
    comp: bool | None = None
    if y is not None:
        m_y = re.search(r"[-+\d]", y)
        if m_y is not None:
            run = re.match(r"([-+]?)(\d*)", y[m_y.start() :])
            assert run is not None
            if run.group(1) or len(run.group(2)) > 2:
                comp = False
            scan.found["year"] = int(run.group(1) + (run.group(2) or "0"))
    if bc:
        scan.found["_bc"] = True
    if m is not None:
        digits = _digits_from(m, False)
        if digits is not None:
            scan.found["mon"] = int(digits)
    if d is not None:
        digits = _digits_from(d, False)
        if digits is not None:
            scan.found["mday"] = int(digits)
    if comp is not None:
        scan.found["_comp"] = comp


def _is_bc(era: str | None) -> bool:
    return era is not None and era[:1].lower() == "b"


def _parse_time(scan: _Scan) -> None:
    m = scan.sub(_TIME)
    if m is None:
        return
    if m.group(2) is not None:
        scan.found["zone"] = m.group(2)
    parts = _TIME_PARTS.match(m.group(1))
    if parts is None:
        return
    hour = int(parts.group(1))
    if parts.group(5) is not None:
        hour = hour % 12 + (12 if parts.group(5).lower() == "p" else 0)
    scan.found["hour"] = hour
    if parts.group(2) is not None:
        scan.found["min"] = int(parts.group(2))
    if parts.group(3) is not None:
        scan.found["sec"] = int(parts.group(3))
    if parts.group(4) is not None:
        scan.found["sec_fraction"] = (int(parts.group(4)), len(parts.group(4)))


def _parse_dates(scan: _Scan, classes: set[str]) -> bool:
    """The first date form that matches (Ruby's ``date__parse`` chain up to ``ok``)."""
    if {"alpha", "digit"} <= classes:
        m = scan.sub(_EU)
        if m is not None:
            _s3e(scan, m.group(4), str(_month(m.group(2))), m.group(1), _is_bc(m.group(3)))
            return True
        m = scan.sub(_US)
        if m is not None:
            _s3e(scan, m.group(4), str(_month(m.group(1))), m.group(2), _is_bc(m.group(3)))
            return True
    if {"digit", "dash"} <= classes and (m := scan.sub(_ISO)) is not None:
        _s3e(scan, m.group(1), m.group(2), m.group(3), False)
        return True
    if {"digit", "dot"} <= classes and (m := scan.sub(_JIS)) is not None:
        scan.found["year"] = int(m.group(2)) + _GENGO[m.group(1).lower()]
        scan.found["mon"], scan.found["mday"] = int(m.group(3)), int(m.group(4))
        return True
    if {"alpha", "digit", "dash"} <= classes:
        if (m := scan.sub(_VMS11)) is not None:
            _s3e(scan, m.group(3), str(_month(m.group(2))), m.group(1), False)
            return True
        if (m := scan.sub(_VMS12)) is not None:
            _s3e(scan, m.group(3), str(_month(m.group(1))), m.group(2), False)
            return True
    if {"digit", "slash"} <= classes and (m := scan.sub(_SLA)) is not None:
        _s3e(scan, m.group(1), m.group(2), m.group(3), False)
        return True
    if {"digit", "dot"} <= classes and (m := scan.sub(_DOT)) is not None:
        _s3e(scan, m.group(1), m.group(2), m.group(3), False)
        return True
    if "digit" in classes and (_parse_iso2(scan) or _parse_small(scan)):
        return True
    if "alpha" in classes and (m := scan.sub(_MON)) is not None:
        scan.found["mon"] = _month(m.group(1))
        return True
    if "digit" in classes:
        if (m := scan.sub(_MDAY)) is not None:
            scan.found["mday"] = int(m.group(1))
            return True
        if (m := scan.sub(_DDD)) is not None:
            _ddd(scan, m)
            return True
    return False


def _parse_iso2(scan: _Scan) -> bool:
    found = scan.found
    if (m := scan.sub(_ISO21)) is not None:
        if m.group(1) is not None:
            found["cwyear"] = int(m.group(1))
        found["cweek"] = int(m.group(2))
        if m.group(3) is not None:
            found["cwday"] = int(m.group(3))
        return True
    if (m := scan.sub(_ISO22)) is not None:
        found["cwday"] = int(m.group(1))
        return True
    if (m := scan.sub(_ISO23)) is not None:
        if m.group(1) is not None:
            found["mon"] = int(m.group(1))
        found["mday"] = int(m.group(2))
        return True
    if (m := scan.sub(_ISO24)) is not None:
        found["mon"] = int(m.group(1))
        if m.group(2) is not None:
            found["mday"] = int(m.group(2))
        return True
    if _ISO25_NOT.search(scan.text) is None and (m := scan.sub(_ISO25)) is not None:
        found["year"], found["yday"] = int(m.group(1)), int(m.group(2))
        return True
    if _ISO26_NOT.search(scan.text) is None and (m := scan.sub(_ISO26)) is not None:
        found["yday"] = int(m.group(1))
        return True
    return False


def _parse_small(scan: _Scan) -> bool:
    m = scan.sub(_YEAR)
    if m is not None:
        scan.found["year"] = int(m.group(1))
        return True
    return False


def _n(text: str, start: int, width: int) -> int:
    return int(text[start : start + width])


def _ddd(scan: _Scan, m: re.Match[str]) -> None:
    """Ruby's ``parse_ddd_cb``: a run of digits read by its length."""
    found = scan.found
    sign, s2, s3, s4, s5 = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
    n = len(s2)
    time_only = s3 is None and s4 is not None
    neg = -1 if sign == "-" else 1
    if time_only and n in (2, 4, 6, 8, 10, 12, 14, 3, 5, 7):
        found["sec"] = _n(s2, n - 2, 2)
        if n >= 4 and n != 3:
            found["min"] = _n(s2, n - 4, 2)
        if n == 3:
            found["min"] = _n(s2, 0, 1)
        if n >= 6:
            found["hour"] = _n(s2, n - 6, 2)
        if n == 5:
            found["hour"] = _n(s2, 0, 1)
        if n >= 8:
            found["mday"] = _n(s2, n - 8, 2)
        if n == 7:
            found["mday"] = _n(s2, 0, 1)
        if n >= 10:
            found["mon"] = _n(s2, n - 10, 2)
        if n == 12:
            found["year"] = neg * _n(s2, 0, 2)
        if n == 14:
            found["year"], found["_comp"] = neg * _n(s2, 0, 4), False
    elif n == 2:
        found["mday"] = _n(s2, 0, 2)
    elif n == 4:
        found["mon"], found["mday"] = _n(s2, 0, 2), _n(s2, 2, 2)
    elif n == 6:
        found["year"] = neg * _n(s2, 0, 2)
        found["mon"], found["mday"] = _n(s2, 2, 2), _n(s2, 4, 2)
    elif n in (8, 10, 12, 14):
        found["year"], found["_comp"] = neg * _n(s2, 0, 4), False
        found["mon"], found["mday"] = _n(s2, 4, 2), _n(s2, 6, 2)
        for key, start in (("hour", 8), ("min", 10), ("sec", 12)):
            if n > start:
                found[key] = _n(s2, start, 2)
    elif n == 3:
        found["yday"] = _n(s2, 0, 3)
    elif n == 5:
        found["year"], found["yday"] = neg * _n(s2, 0, 2), _n(s2, 2, 3)
    elif n == 7:
        found["year"], found["yday"] = neg * _n(s2, 0, 4), _n(s2, 4, 3)
    if s3 is not None and len(s3) in (2, 4, 6):
        keys = ("sec", "min", "hour") if s4 is not None else ("hour", "min", "sec")
        pairs = [s3[i : i + 2] for i in range(0, len(s3), 2)]
        if s4 is not None:
            pairs.reverse()
        for key, pair in zip(keys, pairs, strict=False):
            found[key] = int(pair)
    if s4 is not None:
        found["sec_fraction"] = (int(s4 or "0"), len(s4))
    if s5 is not None:
        found["zone"] = s5
        if s5.startswith("["):  # ``[-5:EST]``: Time.parse reads the name after the colon
            head, colon, tail = s5[1:-1].partition(":")
            found["zone"] = tail if colon else head


def date_parse(text: str) -> dict[str, Any]:
    """Return Ruby's ``Date._parse(text, true)``: the fields found (``year``, ``mon``,
    ``mday``, ``yday``, ``cwyear``, ``cweek``, ``cwday``, ``hour``, ``min``, ``sec``,
    ``sec_fraction`` as ``(numerator, digits)``, ``zone``); ``{}`` when nothing is."""
    scan = _Scan(_NOISE.sub(" ", text))
    classes = _classes(scan.text)
    scan.found["_comp"] = True
    if "alpha" in classes:
        scan.sub(_DAY)
    if "digit" in classes:
        _parse_time(scan)
    _parse_dates(scan, classes)
    if "alpha" in classes and scan.sub(_BC) is not None:
        scan.found["_bc"] = True
    if "digit" in classes and (m := scan.sub(_FRAG)) is not None:
        number = int(m.group(1))
        if "hour" in scan.found and "mday" not in scan.found and 1 <= number <= 31:
            scan.found["mday"] = number
        if "mday" in scan.found and "hour" not in scan.found and 0 <= number <= 24:
            scan.found["hour"] = number
    found = scan.found
    for key in ("cwyear", "year"):
        if found.get("_bc") and key in found:
            found[key] = -found[key] + 1
        if found.get("_comp") and key in found and 0 <= found[key] <= 99:
            found[key] += 1900 if found[key] >= 69 else 2000
    found.pop("_bc", None)
    found.pop("_comp", None)
    return found


def _classes(text: str) -> set[str]:
    classes = set()
    if re.search(r"[A-Za-z]", text):
        classes.add("alpha")
    if re.search(r"[0-9]", text):
        classes.add("digit")
    for char, name in (("-", "dash"), (".", "dot"), ("/", "slash")):
        if char in text:
            classes.add(name)
    return classes


def zone_offset(zone: str, year: int, local: tzinfo) -> int | None:
    """Ruby's ``Time.zone_offset``: seconds east of UTC for ``zone``, or ``None`` when Ruby
    does not know it (the time is then local). ``local``'s own abbreviations on 1 January
    and 1 July of ``year`` count, as ``Time.local(year, 1, 1).zone`` does."""
    upper = zone.upper()
    m = re.fullmatch(r"([+-])(\d\d)(:?)(\d\d)(?:\3(\d\d))?", upper)
    if m is not None:
        seconds = (int(m.group(2)) * 60 + int(m.group(4))) * 60 + int(m.group(5) or 0)
        return -seconds if m.group(1) == "-" else seconds
    if re.fullmatch(r"[+-]\d\d", upper):
        return int(upper) * 3600
    if upper in ZONE_HOURS:
        return ZONE_HOURS[upper] * 3600
    for month in (1, 7):
        try:
            moment = datetime(year, month, 1, tzinfo=local)
        except ValueError:
            return None
        if (moment.tzname() or "").upper() == upper:
            offset = moment.utcoffset()
            return None if offset is None else int(offset.total_seconds())
    return None


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _month_days(year: int, month: int) -> int:
    leap = (year % 4 == 0 and year % 100 != 0) or year % 400 == 0
    return 29 if month == 2 and leap else _MONTH_DAYS[month - 1]


def wall_time(
    year: int, mon: int, day: int, hour: int, minute: int, sec: int, usec: int
) -> datetime:
    """``Time.local``/``Time.utc``'s checks and carries, as a naive datetime."""
    if not 1 <= mon <= 12 or not 1 <= day <= 31 or not 0 <= minute <= 59:
        raise DateParseError("argument out of range")
    if not 0 <= hour <= 24 or not 0 <= sec <= 60 or (hour == 24 and (minute or sec)):
        raise DateParseError("argument out of range")
    try:
        base = datetime(year, mon, 1)
    except ValueError as exc:
        raise DateParseError(f"year {year} out of range") from exc
    extra = timedelta(days=day - 1, hours=hour, minutes=minute, seconds=sec, microseconds=usec)
    try:
        return base + extra
    except OverflowError as exc:
        raise DateParseError(f"year {year} out of range") from exc


def parse_time(text: str, local: tzinfo) -> datetime:
    """Return ``Time.parse(text)`` as an aware datetime (the zone written, else ``local``).

    Raises :class:`DateParseError` where Ruby raises ``ArgumentError``, and where Ruby would
    take the year or the date from the clock (no year in ``text``)."""
    found = date_parse(text)
    fields = ("year", "yday", "mon", "mday", "hour", "min", "sec", "sec_fraction")
    if not any(key in found for key in fields):
        raise DateParseError("no time information")
    if "year" not in found:
        raise DateParseError("no year (Jekyll would take it from the clock at build time)")
    year = int(found["year"])
    if "yday" in found:
        yday = int(found["yday"])
        if not 1 <= yday <= 366:
            raise DateParseError(f"yday {yday} out of range")
        day_one = datetime(year, 1, 1) if 1 <= year <= 9999 else None
        if day_one is None:
            raise DateParseError(f"year {year} out of range")
        moment = day_one + timedelta(days=yday - 1)
        if moment.year != year:
            raise DateParseError(f"yday {yday} out of range")
        found["mon"], found["mday"] = moment.month, moment.day
    numerator, digits = found.get("sec_fraction", (0, 0))
    usec = numerator * 10**6 // 10**digits if digits else 0
    naive = wall_time(
        year,
        int(found.get("mon", 1)),
        int(found.get("mday", 1)),
        int(found.get("hour", 0)),
        int(found.get("min", 0)),
        int(found.get("sec", 0)),
        usec,
    )
    zone = found.get("zone")
    offset = None if zone is None else zone_offset(str(zone), year, local)
    if offset is None:
        return naive.replace(tzinfo=local)
    return naive.replace(tzinfo=timezone(timedelta(seconds=offset)))
