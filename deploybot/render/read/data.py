"""``site.data``: the files of ``_data/`` (Jekyll's ``readers/data_reader.rb``).

- ``.yml``/``.yaml`` (YAML, within ``render.max_yaml_size``), ``.json``, ``.csv`` and
  ``.tsv`` (a header row; each row a mapping of strings) files are read; other files are not;
- ``_data/a/b/c.yml`` is ``site.data.a.b.c``: folders become nested mappings;
- a key is the file name without its extension, with Jekyll's ``sanitize_filename``
  (characters other than word characters, spaces and ``-`` dropped, spaces -> ``_``);
- in one folder files come first (sorted), then folders, as Ruby's ``Dir[]`` lists them;
  a folder replaces a file of the same key.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable
from posixpath import basename, splitext
from typing import Any

import yaml

from deploybot.render.model import MAX_YAML_SIZE
from deploybot.render.read.frontmatter import reader_error
from deploybot.render.read.source import SourceTree
from deploybot.render.read.yamlload import load_yaml
from deploybot.support.errors import SourceError

DATA_DIR = "_data/"
DATA_EXTS = frozenset({".yml", ".yaml", ".json", ".csv", ".tsv"})


def is_data_file(path: str) -> bool:
    """Return whether ``path`` is a file Jekyll reads into ``site.data``."""
    if not path.startswith(DATA_DIR):
        return False
    if any(part.startswith(".") for part in path.split("/")):
        return False
    return splitext(path)[1] in DATA_EXTS


def sanitize(name: str) -> str:
    """Jekyll's ``DataReader#sanitize_filename``."""
    # Ruby's second alternative (spaces at either end) needs a variable look-behind: strip.
    cleaned = re.sub(r"[^\w\s-]+", "", name).strip()
    return re.sub(r"\s+", "_", cleaned)


def parse_data_file(path: str, raw: bytes, max_yaml_size: int = MAX_YAML_SIZE) -> Any:
    """Return the value of one data file. Raises ``SourceError`` (path, line) when it
    does not parse."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError("not valid UTF-8", path) from exc
    ext = splitext(path)[1]
    if ext in (".csv", ".tsv"):
        rows = csv.DictReader(io.StringIO(text), delimiter="\t" if ext == ".tsv" else ",")
        return [dict(row) for row in rows]
    if ext == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise SourceError(f"JSON: {exc.msg}", path, exc.lineno) from exc
    try:
        return load_yaml(text, max_yaml_size)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise SourceError(f"YAML: {exc.problem or exc.context}", path, line) from exc
    except yaml.reader.ReaderError as exc:
        message, line = reader_error(exc, text)
        raise SourceError(message, path, line) from exc


def read_data(
    tree: SourceTree, paths: Iterable[str], max_yaml_size: int = MAX_YAML_SIZE
) -> dict[str, Any]:
    """Return ``site.data`` from the data files ``paths`` (see :func:`is_data_file`) of
    ``tree``. Raises ``SourceError`` for a file that does not parse."""
    files = sorted(p for p in paths if is_data_file(p))
    root: dict[str, Any] = {}
    folders = {id(root)}  # mappings made for folders (a file's own mapping is no folder)
    # Ruby lists a folder's files before its sub-folders: place files first, level by level.
    for path in sorted(files, key=lambda p: (p.count("/"), p)):
        parts = path[len(DATA_DIR) :].split("/")
        node = root
        for folder in parts[:-1]:
            key = sanitize(folder)
            child: Any = node.get(key)
            if id(child) not in folders:
                child = node[key] = {}
                folders.add(id(child))
            node = child
        try:
            raw = tree.read(path)
        except KeyError:
            # A symlink that does not resolve inside the tree: left out, as Jekyll's safe
            # mode leaves it, with its warning (site.read_source_file); not all of site.data.
            continue
        node[sanitize(splitext(basename(path))[0])] = parse_data_file(path, raw, max_yaml_size)
    return root
