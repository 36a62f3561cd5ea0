"""Jekyll's date filters on plain values (deploybot.render.liquid.jekyll_filters), for the Liquid in
pages and the Jinja2 theme alike. Whole pages against real Jekyll: the liquid_agreement
fixture (cases 31-33 and 58-date-parsing.html)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from deploybot.render.liquid import jekyll_filters as jf
from deploybot.render.read.siteconfig import load_config
from deploybot.render.read.source import MemoryTree
from deploybot.render.theme.layouts import make_environment

LA = ZoneInfo("America/Los_Angeles")
NEW_YORK = ZoneInfo("America/New_York")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (date(2020, 7, 14), "2020-07-14T00:00:00-07:00"),
        # a YAML timestamp without offset: UTC, as Psych reads it
        (datetime(2017, 10, 6, 11, 30), "2017-10-06T04:30:00-07:00"),
        (datetime(2017, 10, 6, 11, 30, tzinfo=UTC), "2017-10-06T04:30:00-07:00"),
        ("2017-10-06 11:30:00 -0400", "2017-10-06T08:30:00-07:00"),
        ("2019-04-30 00:00:00 +0800", "2019-04-29T09:00:00-07:00"),
        ("2017-10-06T11:30:00+02:00", "2017-10-06T02:30:00-07:00"),
        ("2017-1-6", "2017-01-06T00:00:00-08:00"),
        ("2017-01-06 10:15", "2017-01-06T10:15:00-08:00"),
        ("  2019-05-30 ", "2019-05-30T00:00:00-07:00"),
        ("3-7-2019", "2019-07-03T00:00:00-07:00"),
        (42, "1969-12-31T16:00:42-08:00"),
    ],
)
def test_date_to_xmlschema_reads_dates_in_the_site_zone(value: object, expected: str) -> None:
    assert jf.date_to_xmlschema(value, tz=LA) == expected


@pytest.mark.parametrize("value", ["yesterday", "2020-13-01", "March 7", 4.2, True, ["2020"]])
def test_what_is_no_date_is_returned_as_it_is(value: object) -> None:
    assert jf.as_time(value, LA) is None
    assert jf.date_to_xmlschema(value, tz=LA) is value
    assert jf.date_format(value, "%Y", tz=LA) is value


def test_the_reviewers_three_cases() -> None:
    # Expected values from Jekyll 4.3.1 with timezone: America/New_York (58-date-parsing).
    assert jf.date_format("3-7-2019", "%Y-%m-%d", tz=NEW_YORK) == "2019-07-03"
    assert jf.date_to_xmlschema("March 7, 2019", tz=NEW_YORK) == "2019-03-07T00:00:00-05:00"
    assert jf.date_to_xmlschema("2019-03-07 10:00", tz=NEW_YORK) == "2019-03-07T10:00:00-05:00"


def test_the_theme_filters_use_the_site_zone() -> None:
    tree = MemoryTree({"_config.yml": b"timezone: America/New_York\n"})
    env = make_environment(tree, "default", load_config(tree))
    template = env.from_string(
        "{{ '2019-03-07 10:00' | date_to_xmlschema }} {{ '3-7-2019' | date('%Y-%m-%d') }}"
    )
    assert template.render() == "2019-03-07T10:00:00-05:00 2019-07-03"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1e14, "100000000000000.0"),
        (1e15, "1.0e+15"),
        (1234567890123456.0, "1.234567890123456e+15"),
        (1e300, "1.0e+300"),
        (0.0001, "0.0001"),
        (0.00001, "1.0e-05"),
        (1.5e-07, "1.5e-07"),
        (3.0, "3.0"),
        (-0.0, "-0.0"),
        (-2.5e20, "-2.5e+20"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_floats_print_as_ruby_prints_them(value: float, expected: str) -> None:
    # Ruby 3.1's Float#to_s, as Jekyll 4.3.1 printed them (59-floats.html)
    assert jf.to_text(value) == expected
