"""How a key of ``deploybot.toml`` is declared: one field of a record in :mod:`.schema`.

The idea is mkdocs' ``config_options``: each option carries its own rule, and the loader
and the documentation walk the options instead of repeating them. Here an option is a
dataclass field: its annotation is the key's type, its default the key's default, and its
metadata an :class:`Option` holding the rest (the TOML name when it differs, an integer's
range, the choices of a string, the check of the value, the one-line help and an example).
:func:`key` declares one, :func:`required_key` the key without a default, :func:`table` a
nested table. A field declared otherwise is no key: it records something the loader
derives (which key gave a value), for messages.

:mod:`deploybot.config.load` walks these to read a file (:func:`declared`) and
:mod:`deploybot.config.reference` to write the example config and the reference page.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

Check = Callable[[Any, str, Path], object]
"""A value rule: ``check(value, dotted_key, config_file)`` raises
:class:`~deploybot.support.errors.ConfigError` naming the key and the file when the value
cannot work, and returns None, or the value as it will be used (``check_git_url`` rewrites
``ssh+git://``). Never called for None (an unset optional key)."""

_OPTION = "deploybot.config.option"
_TABLE = "deploybot.config.table"


@dataclass(frozen=True)
class Option:
    """What a key declares besides its type and default.

    ``help``: one line for the example config and the reference page. ``toml``: the key's
    TOML name when it is no Python name (``from``). ``range``: an integer's bounds,
    inclusive; ``zero_is_no_limit``: 0 is allowed too and means "no limit". ``choices``: the
    strings allowed. ``check``: see :data:`Check`. ``example``: a value the example config
    shows, commented out, instead of the default (for a key unset by default).
    """

    help: str
    toml: str | None = None
    range: tuple[int, int] | None = None
    zero_is_no_limit: bool = False
    choices: tuple[str, ...] = ()
    check: Check | None = None
    example: object = None


@dataclass(frozen=True)
class Table:
    """A nested table: ``help`` says what it is for (one line, or a few sentences)."""

    help: str


def key(
    default: T,
    *,
    help: str,
    toml: str | None = None,
    range: tuple[int, int] | None = None,
    zero_is_no_limit: bool = False,
    choices: tuple[str, ...] = (),
    check: Check | None = None,
    example: object = None,
) -> T:
    """Declare a key with ``default`` (a field of a frozen dataclass); see :class:`Option`."""
    option = Option(help, toml, range, zero_is_no_limit, choices, check, example)
    return field(default=default, metadata={_OPTION: option})


def required_key(*, help: str, check: Check | None = None, example: object = None) -> Any:
    """The metadata of a key without a default: ``url: str = field(metadata=required_key(...))``
    (``dataclasses.field`` itself, so that type checkers see the field has no default)."""
    return {_OPTION: Option(help, check=check, example=example)}


def table(cls: type[T], *, help: str) -> T:
    """Declare a nested table whose keys are the fields of the record ``cls``."""
    return field(default_factory=cls, metadata={_TABLE: Table(help)})


def required_table(*, help: str) -> Mapping[str, Table]:
    """The metadata of a table that must be given (``[source]``)."""
    return {_TABLE: Table(help)}


def when_set(check: Check) -> Check:
    """``check``, skipped for an empty value ("" or ()), which means "unset" for its key."""

    def checked(value: Any, dotted: str, path: Path) -> object:
        return check(value, dotted, path) if value else None

    return checked


@dataclass(frozen=True)
class Declared:
    """One declared key or table, as :func:`declared` finds it.

    ``dotted``: the key as messages name it (``notify.smtp.port``); ``name``: the record's
    attribute; ``toml``: the key's TOML name; ``hint``: the field's type (None taken out
    of an optional one: ``kind``; ``optional`` says whether None is allowed); ``default``:
    ``dataclasses.MISSING`` for a required key; ``record``: the record class of a table,
    else None; ``option``: a key's :class:`Option`, else None; ``help``: its help.
    """

    dotted: str
    name: str
    toml: str
    kind: Any
    optional: bool
    default: Any
    record: type | None
    option: Option | None
    help: str

    @property
    def required(self) -> bool:
        """No default: the file must set it."""
        return self.default is dataclasses.MISSING


def declared(cls: type[Any], prefix: str = "") -> tuple[Declared, ...]:
    """The keys and tables the record ``cls`` declares, in declaration order; ``prefix``
    (``"notify."``) is put before each one's name in ``dotted``. Fields that are no key
    are left out."""
    found = _DECLARED.get((cls, prefix))
    if found is None:
        found = _DECLARED[(cls, prefix)] = _read_fields(cls, prefix)
    return found


_DECLARED: dict[tuple[type, str], tuple[Declared, ...]] = {}
"""What :func:`declared` found, by record and prefix: a config is loaded at each run and at
each SIGHUP, and the records never change."""


def _read_fields(cls: type, prefix: str) -> tuple[Declared, ...]:
    hints = typing.get_type_hints(cls)
    found = []
    for f in dataclasses.fields(cls):
        option: Option | None = f.metadata.get(_OPTION)
        table_meta: Table | None = f.metadata.get(_TABLE)
        if option is None and table_meta is None:
            continue
        kind, optional = _unwrap(hints[f.name])
        default = f.default
        if f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        toml = (option.toml if option else None) or f.name
        record = kind if table_meta is not None else None
        help_text = option.help if option is not None else typing.cast(Table, table_meta).help
        found.append(
            Declared(prefix + toml, f.name, toml, kind, optional, default, record, option,
                     help_text)
        )  # fmt: skip
    return tuple(found)


def every_key(cls: type, prefix: str = "") -> Iterator[Declared]:
    """Every key of ``cls`` and of its tables, depth first (tables themselves left out)."""
    for item in declared(cls, prefix):
        if item.record is not None:
            yield from every_key(item.record, item.dotted + ".")
        else:
            yield item


def _unwrap(hint: Any) -> tuple[Any, bool]:
    """``(type, optional)``: ``str | None`` -> ``(str, True)``."""
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return inner[0], True
    return hint, False
