"""The stale sweep (deploybot.state.stale): what a killed run leaves half-written is removed."""

from __future__ import annotations

import os
from pathlib import Path

from deploybot.notify.deliver import outbox
from deploybot.state import stale


def test_a_killed_writes_temp_file_is_swept_in_every_outbox_folder(tmp_path: Path) -> None:
    """Every outbox folder a message is written into through a temp file is swept: the
    failed/ and dropped/ ones came later and had been forgotten, so their temps stayed."""
    folders = ["", outbox.SENT_DIR, outbox.SUPERSEDED_DIR, outbox.FAILED_DIR, outbox.DROPPED_DIR]
    temps = []
    for name in folders:
        folder = tmp_path / "outbox" / name
        folder.mkdir(parents=True, exist_ok=True)
        temp = folder / ".k.json.4242.tmp"
        temp.write_bytes(b"half")
        os.utime(temp, (1000, 1000))
        temps.append(temp)
    removed = stale.sweep(tmp_path, [], started=2000)
    assert sorted(removed) == sorted(temps)
    assert [temp.exists() for temp in temps] == [False] * len(folders)
