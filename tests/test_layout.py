"""The package's layout: the stages read off the tree, imports run one way, and no two modules
import each other, however indirectly.

Every import of every module counts, read with ``ast``: at the top, inside a function (a lazy
import is still a dependency) and under ``if TYPE_CHECKING:`` (a type is one too). Importing a
submodule runs its package's ``__init__.py`` as well; that is not counted as an import of the
package, which holds because an ``__init__.py`` imports nothing (checked here too).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "deploybot"

STAGES = ("deploybot.watch", "deploybot.render", "deploybot.publish", "deploybot.notify")
"""The pipeline's four stages, in the order a push goes through them: one layer, and no stage
imports another (only the pipeline joins them)."""

ROOT = "deploybot"
"""The root package alone (its ``__version__``), not what lies under it."""

LAYERS: tuple[tuple[str, ...], ...] = (
    (ROOT, "deploybot.support"),
    ("deploybot.git",),
    ("deploybot.config",),
    ("deploybot.record",),
    ("deploybot.state",),
    STAGES,
    ("deploybot.pipeline",),
    ("deploybot.serve", "deploybot.livepreview"),
    ("deploybot.cli", "deploybot.__main__"),
)
"""The layers, first to last: a module imports only from its own layer and those before it.
``deploybot`` alone is the root package (its ``__version__``); the build record (the note each
build commit carries), which the publish stage writes and the notify stage reads, lies below the
stages; then the stages, side by side (:data:`STAGES`), then what joins them."""

SUBLAYERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "deploybot.render": (
        (
            "deploybot.render.model",
            "deploybot.render.limits",
            "deploybot.render.fingerprint",
            "deploybot.render.html_elements",
        ),
        ("deploybot.render.read",),
        ("deploybot.render.highlight",),
        ("deploybot.render.markdown",),
        ("deploybot.render.sass",),
        ("deploybot.render.liquid",),
        ("deploybot.render.theme",),
        ("deploybot.render.links",),
        ("deploybot.render.outputs",),
        ("deploybot.render.engine",),
    ),
    "deploybot.notify": (
        ("deploybot.notify.gitlog",),
        ("deploybot.notify.compose",),
        ("deploybot.notify.deliver",),
        (
            "deploybot.notify.announce",
            "deploybot.notify.source_read",
            "deploybot.notify.stage",
            "deploybot.notify.resend",
            "deploybot.notify.commit_email",
            "deploybot.notify.preview",
        ),
    ),
}
"""Inside a stage, the same rule between its parts: the render stage's records first, then the
order a page goes through; the notify stage's git log library, then the emails, then their
delivery, then the stage's entry points."""


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _module_of(dotted: str) -> str | None:
    """The module ``dotted`` names, or that holds the name ``dotted`` ends in."""
    while dotted and dotted not in modules():
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def _imported(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """``(module, line)`` for every import of a deploybot module in the module ``name``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            # from PACKAGE import MODULE imports the module; from MODULE import NAME, the module
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules() else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            if target == "deploybot" or target.startswith("deploybot."):
                found = _module_of(target)
                if found is not None and found != name:
                    yield found, node.lineno


@cache
def graph() -> dict[str, dict[str, int]]:
    """Module -> {module it imports: the line of the first such import}."""
    edges: dict[str, dict[str, int]] = {}
    for name, path in modules().items():
        edges[name] = {}
        for target, line in _imported(name, path):
            edges[name].setdefault(target, line)
    return edges


def _place(name: str, layers: tuple[tuple[str, ...], ...]) -> int | None:
    """The index of the layer ``name`` belongs to (its longest matching prefix), or None."""
    best: tuple[int, int] | None = None
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            inside = name == prefix or (prefix != ROOT and name.startswith(prefix + "."))
            if inside and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def _order(name: str) -> tuple[int, int | None]:
    """``(layer, sublayer)`` of a module; the sublayer is None outside a stage with parts."""
    layer = _place(name, LAYERS)
    assert layer is not None, f"{name} is in no layer"
    stage = next((s for s in SUBLAYERS if name == s or name.startswith(s + ".")), None)
    return layer, None if stage is None else _place(name, SUBLAYERS[stage])


def _later(target: str, name: str) -> bool:
    """Whether ``target`` lies in a later layer (or a later part of the same stage)."""
    (layer, part), (own_layer, own_part) = _order(target), _order(name)
    if layer != own_layer:
        return layer > own_layer
    return part is not None and own_part is not None and part > own_part


def _where(name: str) -> str:
    return str(modules()[name].relative_to(PACKAGE.parent))


def test_every_module_has_a_place_in_the_layers() -> None:
    unplaced = [name for name in modules() if _place(name, LAYERS) is None]
    assert unplaced == [], "add them to LAYERS"
    for stage, parts in SUBLAYERS.items():
        inside = [n for n in modules() if n.startswith(stage + ".")]
        assert [n for n in inside if _place(n, parts) is None] == [], f"add them to {stage}"


def test_no_module_imports_a_later_layer() -> None:
    """Nothing imports a later layer, nor any part of a stage a later part; nothing below the
    pipeline imports it."""
    backwards = [
        f"{_where(name)}:{line} imports {target}"
        for name, targets in graph().items()
        for target, line in targets.items()
        if _later(target, name)
    ]
    assert backwards == []


def _stage(name: str) -> str | None:
    return next((s for s in STAGES if name == s or name.startswith(s + ".")), None)


def test_no_stage_imports_another() -> None:
    """Each stage is a package to read alone: what two stages share (the build record, the
    git plumbing, the config) lies below them, and only the pipeline joins them."""
    crossing = [
        f"{_where(name)}:{line} imports {target}"
        for name, targets in graph().items()
        for target, line in targets.items()
        if _stage(name) is not None and _stage(target) not in (None, _stage(name))
    ]
    assert crossing == []


def test_nothing_imports_the_cli() -> None:
    into_cli = [
        f"{_where(name)}:{line} imports {target}"
        for name, targets in graph().items()
        if not (name.startswith("deploybot.cli.") or name == "deploybot.__main__")
        for target, line in targets.items()
        if target == "deploybot.cli" or target.startswith("deploybot.cli.")
    ]
    assert into_cli == []


def test_support_imports_only_support() -> None:
    outside = [
        f"{_where(name)}:{line} imports {target}"
        for name, targets in graph().items()
        if name.startswith("deploybot.support")
        for target, line in targets.items()
        if not target.startswith("deploybot.support")
    ]
    assert outside == []


def test_a_package_init_imports_nothing() -> None:
    """An ``__init__.py`` only says what its folder holds: importing any module runs the
    ``__init__.py`` of every package above it, so one that imported would load what the
    module never asked for (the no-op ``run-once`` goes through ``cli`` and ``pipeline``)."""
    importing = [
        f"{_where(name)} imports {', '.join(sorted(targets))}"
        for name, targets in graph().items()
        if modules()[name].name == "__init__.py" and targets
    ]
    assert importing == []


def _cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert _cycles(edges) == [["a", "b", "c"]]
    assert _cycles({"a": {"b": 1}, "b": {}}) == []


def test_there_are_no_import_cycles() -> None:
    """Zero circles between modules: where two need each other, one gets a narrow Protocol or
    the shared part a leaf module of its own (a function-local import does not hide one)."""
    described = [
        " <-> ".join(
            f"{_where(a)}:{graph()[a][b]} imports {b}"
            for a in cycle
            for b in cycle
            if b in graph()[a]
        )
        for cycle in _cycles(graph())
    ]
    assert described == []


def test_the_graph_holds_top_level_lazy_and_type_checking_imports() -> None:
    """Every check above asserts an empty list, so each would pass if no import were read:
    a top-level, a function-local and a ``TYPE_CHECKING`` import are all found."""
    edges = graph()
    assert "deploybot.support.errors" in edges["deploybot.git.failure"]  # at the top
    assert "deploybot.notify.deliver.outbox" in edges["deploybot.serve.build_process"]  # lazy
    assert "deploybot.render.engine.cache" in edges["deploybot.pipeline.run"]  # TYPE_CHECKING
    assert sum(len(targets) for targets in edges.values()) > 500
