"""PackedSink keeps the first outputs as they are and compresses the rest, and reads back
what was written last for each path (deploybot.render.outputs.sinks)."""

from __future__ import annotations

from deploybot.render.outputs.sinks import PackedSink


def test_packed_sink_keeps_its_room_raw_and_reads_back_every_path() -> None:
    sink = PackedSink(raw_bytes=10)
    sink.write("a.html", b"12345")
    sink.write("b.html", b"123456")  # past the room: compressed
    sink.write("a.html", b"1")  # rewritten: its room comes back first
    sink.write("c.html", b"123456789")
    sink.copy("d.png", "0" * 40, lambda: b"png")
    sink.delete("b.html")
    sink.write("e.html", b"x" * 100)
    assert dict(sink) == {
        "a.html": b"1",
        "c.html": b"123456789",
        "d.png": b"png",
        "e.html": b"x" * 100,
    }
    assert list(sink) == ["a.html", "c.html", "d.png", "e.html"] and len(sink) == 4
    sink.delete("c.html")  # its room is free again
    sink.write("f.html", b"123456789")
    assert sink["f.html"] == b"123456789" and "c.html" not in sink
