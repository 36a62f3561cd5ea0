"""Sass and SCSS pages (:mod:`deploybot.render.sass.convert`): settings, the import
resolution over the source tree, errors at the file and line, and the bounds on a compile.
The output against real Jekyll's is in ``tests/test_render_jekyll_fixtures.py``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from deploybot.render.engine.build import build_site
from deploybot.render.model import RenderOptions
from deploybot.render.read.source import MemoryTree
from deploybot.render.sass.convert import (
    SassLimits,
    SassSettings,
    TreeImporter,
    compile_stylesheet,
    load_paths,
    sass2scss,
    sass_settings,
)
from deploybot.support.errors import SourceError

NO_MAP = SassSettings(sourcemap="never")


def _compile(
    text: str,
    files: dict[str, bytes],
    *,
    settings: SassSettings = NO_MAP,
    body_line: int = 1,
    limits: SassLimits | None = None,
) -> str:
    tree = MemoryTree(files)
    sheet = compile_stylesheet(
        text, "assets/main.scss", tree, settings, body_line=body_line, limits=limits
    )
    return sheet.css


def test_settings_follow_the_converter() -> None:
    settings, notes = sass_settings(
        {"style": ":compressed", "sourcemap": "never", "line_comments": True, "precision": 3}
    )
    assert (settings.style, settings.sourcemap, settings.line_comments) == (
        "compressed",
        "never",
        True,
    )
    assert settings.precision == 3 and notes == ()
    assert sass_settings({"style": "fancy"})[0].style == "compact"
    assert sass_settings(None)[0] == SassSettings()
    settings, notes = sass_settings(
        {"implementation": "sass-embedded", "quiet_deps": True, "load_paths": ["/usr", "ok"]}
    )
    assert notes == (
        "sass.implementation sass-embedded is not supported: LibSass used",
        "sass.quiet_deps is not supported: ignored",
        "sass.load_paths '/usr' is outside the source: not searched",
    )
    assert sass_settings({"sass_dir": "../../x/"})[0].sass_dir == "x"


def test_sourcemap_setting_by_environment() -> None:
    assert SassSettings().writes_map("production")
    assert not SassSettings(sourcemap="never").writes_map("development")
    assert SassSettings(sourcemap="development").writes_map("development")
    assert not SassSettings(sourcemap="development").writes_map("production")


def test_load_paths_keep_inside_the_source_and_expand_globs() -> None:
    settings = SassSettings(
        sass_dir="styles/", load_paths=("/etc", "../up", "vendor/*/scss", "lib", "styles")
    )
    folders = ["lib", "vendor", "vendor/a/scss", "vendor/b", "vendor/b/scss"]
    assert load_paths(settings, lambda: folders) == (
        "vendor/a/scss",
        "vendor/b/scss",
        "lib",
        "styles",
    )


def test_imports_resolve_as_libsass_resolves_them() -> None:
    files = {
        "_sass/_a.scss": b".a { x: 1; }",
        "_sass/b.scss": b".b { x: 2; }",
        "_sass/c/_index.scss": b".c { x: 3; }",
        "_sass/d/_e.scss": b'@import "f"; .e { x: 4; }',
        "_sass/d/_f.scss": b".f { x: 5; }",
        "_root.scss": b".root { x: 6; }",
    }
    css = _compile('@import "a", "b", "c", "d/e", "root";', files)
    assert css == (
        ".a { x: 1; }\n\n.b { x: 2; }\n\n.c { x: 3; }\n\n.f { x: 5; }\n\n"
        ".e { x: 4; }\n\n.root { x: 6; }\n"
    )


def test_css_and_url_imports_stay_css() -> None:
    css = _compile('@import "x.css", "http://e.org/a", "//cdn/b"; @import url(c.css);', {})
    kept = ["@import url(x.css);", '@import "http://e.org/a";', '@import "//cdn/b";']
    assert css == "\n".join([*kept, "@import url(c.css);", ""])


def test_indented_partials_are_converted() -> None:
    assert sass2scss("a\n  b: c\n") == "a {\n  b: c; }\n"
    css = _compile('@import "ind";', {"_sass/_ind.sass": b"nav\n  ul\n    margin: 0\n"})
    assert css == "nav ul { margin: 0; }\n"


def _error(
    text: str,
    files: dict[str, bytes],
    *,
    settings: SassSettings = NO_MAP,
    body_line: int = 1,
    limits: SassLimits | None = None,
) -> SourceError:
    with pytest.raises(SourceError) as info:
        _compile(text, files, settings=settings, body_line=body_line, limits=limits)
    return info.value


def test_error_names_the_stylesheet_and_its_line_in_the_file() -> None:
    exc = _error("\n.a { color: $nope; }\n", {}, body_line=4)
    assert (exc.path, exc.line) == ("assets/main.scss", 5)
    assert exc.message == 'Sass conversion error: Undefined variable: "$nope".'


def test_error_in_a_partial_names_the_partial() -> None:
    files = {"_sass/_bad.scss": b"// one\n.b { width: 1px + 1s; }\n"}
    exc = _error('@import "bad";', files, body_line=3)
    assert (exc.path, exc.line) == ("_sass/_bad.scss", 2)
    assert "Incompatible units" in exc.message


def test_missing_ambiguous_and_escaping_imports_are_errors() -> None:
    exc = _error('\n@import "nothere";', {}, body_line=3)
    assert (exc.path, exc.line) == ("assets/main.scss", 4)
    assert exc.message == "Sass conversion error: File to import not found or unreadable: nothere."
    assert _compile('@import "y";', {"_sass/_y.scss": b".y{a:b}", "_sass/y/_index.scss": b"!"})
    both = {"_sass/_x.scss": b"", "_sass/x.scss": b""}
    exc = _error('@import "x";', both)
    assert "It's not clear which file to import for '@import \"x\"'." in exc.message
    assert "_x.scss x.scss" in exc.message
    for outside in ("../../etc/passwd", "/etc/passwd"):
        exc = _error(f'@import "{outside}";', {})
        assert "(outside the source)" in exc.message, outside
    exc = _error('@import "file:///etc/hostname";', {})
    assert exc.message.endswith("not found or unreadable: file:///etc/hostname.")


def test_imports_never_read_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A partial on disk, in the working folder and in an absolute load path, is not
    found: only the tree is read."""
    (tmp_path / "_disk.scss").write_text(".disk { x: 1; }")
    monkeypatch.chdir(tmp_path)
    settings = SassSettings(sourcemap="never", load_paths=(str(tmp_path),))
    exc = _error('@import "disk";', {}, settings=settings)
    assert "File to import not found or unreadable: disk." in exc.message


def test_importer_records_every_path_it_looked_at() -> None:
    tree = MemoryTree({"_sass/_a.scss": b""})
    importer = TreeImporter(tree, "", ("_sass",), 100)
    assert importer("a", "/tmp/x/main.scss") == [("_sass/_a.scss", "")]
    assert importer.looked_at[:3] == ["a", "_a", "_a.scss"]
    assert "a/_index.scss" in importer.looked_at  # nothing at the root: its index too
    # every candidate of the folder where it is found, and no index there
    assert importer.looked_at[-1] == "_sass/a.css"
    assert "_sass/_a.scss" in importer.looked_at
    assert not any(p.startswith("_sass/a/") for p in importer.looked_at)


def test_imported_source_is_bounded() -> None:
    files = {"_sass/_big.scss": b"/* " + b"x" * 2000 + b" */"}
    exc = _error('@import "big", "big";', files, limits=SassLimits(max_output=3000))
    assert "the imports pass 3,000 bytes" in exc.message


def test_an_endless_loop_is_stopped_in_time() -> None:
    start = time.monotonic()
    exc = _error("$i: 0; @while true { $i: $i + 1; }", {}, limits=SassLimits(seconds=1.0))
    assert time.monotonic() - start < 5
    assert exc.message == "Sass: compiling this stylesheet took over 1 s"
    assert exc.path == "assets/main.scss"


def test_a_compile_that_needs_too_much_memory_is_stopped() -> None:
    text = "@for $i from 1 through 100000000 { .a-#{$i} { b: $i; } }"
    limits = SassLimits(seconds=60.0, memory=64 * 2**20, max_output=10**10)
    exc = _error(text, {}, limits=limits)
    assert exc.message == "Sass: compiling this stylesheet needs more than 64 MB"


def test_output_past_the_page_limit_is_an_error() -> None:
    text = "@for $i from 1 through 2000 { .a-#{$i} { b: $i; } }"
    exc = _error(text, {}, limits=SassLimits(max_output=10_000))
    assert exc.message == (
        "Sass conversion error: the compiled CSS passes 10,000 bytes (render.max_page_bytes)"
    )


def test_a_sass_error_stops_the_build() -> None:
    files = {"assets/site.scss": b"---\n---\n\n.a { b: c; }\n.b { c: $x; }\n"}
    with pytest.raises(SourceError) as info:
        build_site(MemoryTree(files), RenderOptions())
    assert (info.value.path, info.value.line) == ("assets/site.scss", 5)
    assert info.value.message == 'Sass conversion error: Undefined variable: "$x".'


def test_a_build_writes_the_css_and_its_map() -> None:
    files = {
        "_config.yml": b"sass:\n  style: compressed\n",
        "assets/site.scss": b"---\n---\n@import 'v';\n.a { color: $c; }\n",
        "_sass/_v.scss": b"$c: #fff;\n",
        "assets/raw.scss": b".not { compiled: yes }\n",
    }
    out = build_site(MemoryTree(files), RenderOptions()).files
    assert out["assets/site.css"] == b".a{color:#fff}\n\n/*# sourceMappingURL=site.css.map */"
    assert b'"sources": [\n\t\t"site.scss",\n\t\t"_sass/_v.scss"\n\t]' in out["assets/site.css.map"]
    assert out["assets/raw.scss"] == files["assets/raw.scss"]


def test_render_workers_compile_the_same_stylesheets(tmp_path: Path) -> None:
    """A full build in worker processes (each compile forked from a worker) writes what
    the serial build writes."""
    from deploybot.render.engine.incremental import build_into, open_cache
    from deploybot.render.outputs.sinks import MemorySink

    files = {
        "_sass/_v.scss": b"$c: red;\n",
        **{f"s{i}.scss": f"---\n---\n@import 'v'; .s{i} {{ c: $c; }}\n".encode() for i in range(6)},
    }
    serial = build_site(MemoryTree(files), RenderOptions()).files
    sink = MemorySink()
    options = RenderOptions(jobs=2, parallel_from=1)
    build_into(MemoryTree(files), options, open_cache(None), sink, None)
    assert sink.files == dict(serial)
    assert sink.files["s5.css"].startswith(b".s5 { c: red; }")
