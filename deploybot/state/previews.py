"""The previews' own part of the state folder, and its record of what each preview shows.

Branch previews keep everything apart from the production build, under ``<state.dir>/previews/``
(:data:`FOLDER`): their own lock, source and publish mirrors, build cache, themes and outbox
(:func:`preview_state`, the same layout as the production's :class:`~.statedir.StatePaths`),
so that a preview never moves the production mirrors' refs, its no-op stamp
(:mod:`deploybot.pipeline.noop`), its notify records or its cache, and a preview run never
waits for a production run's lock (nor the other way round).

``previews.json`` (:data:`RECORD`) records, per preview folder name, the source branch, the
source commit last previewed and the preview branch's commit: what the next run compares the
branch tips against (a tip unchanged since its preview is not built again) and which
previews to remove when their branch is gone. Losing it costs one build of every preview
(their trees are then unchanged, so no commit is made).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from deploybot.config.schema import Config, StateConfig
from deploybot.state import private

FOLDER = "previews"
"""The folder of ``state.dir`` holding the previews' state."""
RECORD = "previews.json"
"""The record of the previews published, in :data:`FOLDER`."""


def preview_state(config: Config) -> Config:
    """``config`` with ``state.dir`` the previews' folder (:data:`FOLDER`), so that
    :func:`deploybot.state.statedir.held` and :func:`~deploybot.state.statedir.state_paths`
    give the previews' lock, mirrors, cache and outbox."""
    return dataclasses.replace(config, state=StateConfig(dir=config.state.dir / FOLDER))


@dataclass(frozen=True)
class Shown:
    """What one preview folder shows: the source ``branch``, the ``source_commit`` built
    and the preview branch's ``commit`` that published it (40 hex each). A build of
    ``source_commit`` that failed on bad input keeps the earlier ``commit`` ("" for none):
    that tip is not built again."""

    branch: str
    source_commit: str
    commit: str


def read_record(state_dir: Path) -> dict[str, Shown]:
    """The record in the previews' state folder ``state_dir``: ``{folder name: Shown}``;
    ``{}`` when it is missing or cannot be read (then every preview is built again)."""
    try:
        data = json.loads((state_dir / RECORD).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    shown: dict[str, Shown] = {}
    if not isinstance(data, dict):
        return shown
    for name, entry in data.items():
        try:
            shown[str(name)] = Shown(entry["branch"], entry["source_commit"], entry["commit"])
        except (KeyError, TypeError):
            continue
    return shown


def write_record(state_dir: Path, shown: dict[str, Shown]) -> None:
    """Write ``shown`` as the record of ``state_dir``, atomically
    (:func:`deploybot.state.private.write_file`). Raises OSError (a full disk: the caller's
    ``no_space_left`` tells it)."""
    data = {name: dataclasses.asdict(entry) for name, entry in sorted(shown.items())}
    body = json.dumps(data, indent=1, sort_keys=True).encode("utf-8") + b"\n"
    private.write_file(state_dir / RECORD, body)
