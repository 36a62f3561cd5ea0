"""Pathological post bodies for the parse-time tests and the benchmark.

Each case maps a size ``n`` (characters, roughly) to a post body: long runs of one
delimiter, deep nesting, and the shapes that were once super-linear (a table cell of
backticks: cubic; ``{:`` runs and table-like lines without a table: quadratic).
:func:`render_body` renders a body the way a post's content is rendered (Liquid, then
Markdown, then the Liquid fragments put back), with no output limit; :func:`run_bounded`
runs a function in a child process killed after a time bound, so a case that got
super-linear fails (or is reported) instead of hanging; :func:`work_growth` measures how the
work of a call grows with its input (the tests' measure: a ratio, not a speed).
"""

from __future__ import annotations

import gc
import multiprocessing
import time
from collections.abc import Callable
from typing import Any

from deploybot.render.liquid.templates import render_liquid, restore_fragments
from deploybot.render.markdown.renderer import make_markdown, markdown_to_html
from deploybot.support.errors import SourceError


def _run(unit: str) -> Callable[[int], str]:
    """A run of ``unit`` between two words, on one line."""
    return lambda n: "a " + unit * max(1, n // len(unit)) + " b\n"


def _lines(line: str) -> Callable[[int], str]:
    """``line`` repeated (it ends with a newline)."""
    return lambda n: line * max(1, n // len(line))


CASES: dict[str, Callable[[int], str]] = {
    # the cases
    "table cell of backticks": lambda n: "| a | b |\n|---|---|\n| " + "`" * n + " | x |\n",
    # kramdown's definition pattern (a lazy URL, an optional title) on many ` "`: 96 kB, 55 s
    "link definition of quotes": lambda n: "[x]: a" + ' "b' * (n // 3) + "\n\n[a][x]\n",
    "{: repeated": lambda n: "para\n" + "{:" * (n // 2) + "\n",
    # runs of one delimiter
    "*": _run("*"),
    "_": _run("_"),
    "[": _run("["),
    "![": _run("!["),
    "<": _run("<"),
    "`": _run("`"),
    "{%": _run("{%"),
    "{{": _run("{{"),
    "|": _run("|"),
    "$$": _run("$$"),
    "^[": _run("^["),
    "[^": _run("[^"),
    ":": _run(":"),
    "{": _run("{"),
    "}": _run("}"),
    "\\": _run("\\"),
    "*a": _run("*a"),
    "[a](": _run("[a]("),
    # deep nesting
    ">>>>": lambda n: ">" * n + " x\n",
    "- - - -": lambda n: "- " * (n // 2) + "x\n",
    "[[[[": lambda n: "[" * n + "x" + "]" * n + "\n",
    "> > lines": _lines("> "),
    # kramdown attribute lists
    "{: lines": _lines("{:\n"),
    "{: a=": _run('{: a="'),
    "{:a: ald": _run("{:a: b='"),
    "{: .class": _run("{: .a"),
    # kramdown tables
    "| lines": _lines("|x\n"),
    "| bare lines": _lines("|\n"),
    "|---| lines": _lines("|---|\n"),
    "| row lines": _lines("| a |\n"),
    "|` lines": _lines("|`x\n"),
    "table cell of ``|": lambda n: "| a | b |\n|---|---|\n| " + "`|" * (n // 2) + " |\n",
    "table of rows": lambda n: "| a | b |\n|---|---|\n" + "| `x` | y |\n" * (n // 12),
    "table cell of dashes": lambda n: "| a | b |\n|---|---|\n| " + "-" * n + " | x |\n",
    "table cell of - -": lambda n: "| a | b |\n|---|---|\n| " + "- " * (n // 2) + " | x |\n",
    "separator of dashes": lambda n: "| a |\n|" + "-" * n + ":-|\n| b |\n",
    # a 1,000-character reference link used all over (output ~ 140 x input, linear)
    "[a][x] uses": lambda n: f"[x]: /{'u' * 1000}\n\n" + "[a][x] " * (n // 7) + "\n",
    # kramdown block HTML, the end-of-block marker, TOCs, math, extensions, links (issue 9.5)
    "^ lines": _lines("^\n"),
    "para ^ lines": _lines("a\n^\n"),
    "- ^ lines": _lines("- a\n^\n"),
    "{:toc} lists": _lines("* TOC\n{:toc}\n\n# h\n\n"),
    "toc of headings": lambda n: "* TOC\n{:toc}\n\n" + "## *h* [l](/x)\n\n" * (n // 17),
    "<div markdown=1> nesting": lambda n: '<div markdown="1">\n' * (n // 19) + "x\n",
    "<div markdown=1> closed": _lines('<div markdown="1">\nx\n</div>\n'),
    "<div markdown=1> inline": _lines('<div markdown="1">*x*</div>\n'),
    "<p markdown=span> lines": _lines('<p markdown="span">x\n'),
    "<div> raw nesting": lambda n: "<div>" * (n // 5) + "\n",
    "<div><span> raw": lambda n: "<div>\n" + "<span>" * (n // 6) + "\n",
    "<div> lines": _lines("<div>\n"),
    "</div> lines": _lines("</div>\n"),
    '<div a=" lines': _lines('<div a="\n'),
    "<x lines": _lines("<x\n"),
    "<!-- lines": _lines("<!--\n"),
    "<span> run": _run("<span>"),
    "</span> run": _run("</span>"),
    "<a b=' run": _run("<a b='"),
    "$$ lines": _lines("$$\n"),
    "$$ x lines": _lines("$$ x\n\n"),
    "{::comment} lines": _lines("{::comment}\n"),
    # lines each added to the paragraph alone, which copied it (quadratic)
    "<span>a lines": _lines("<span>a\n"),
    "para then <x lines": lambda n: "a\n" + "<x\n" * (n // 3),
    # a block quote's lines joined one by one (quadratic)
    "> blank lines": _lines(">\n"),
    # a start tag without "}": its options ran to the end of the text from each (quadratic)
    "{::comment x lines": _lines("{::comment x\n"),
    "{::comment x run": _run("{::comment x "),
    "{::nomarkdown} run": _run("{::nomarkdown}"),
    "[a] [b] uses": lambda n: "[b]: /x\n\n" + "[a] [b] " * (n // 8) + "\n",
    "[a] spaces": lambda n: "[b]: /x\n\n[a]" + " " * n + "x\n",
    "task lines": _lines("- [ ] x\n"),
    "loose list lines": _lines("- a\n\n"),
    "nested list items": lambda n: "".join("  " * (i % 30) + "- x\n" for i in range(n // 30)),
    "| headerless lines": _lines("| a | b |\n"),
    "{% toc %} headings": lambda n: "{% toc %}\n" + "<h2>x</h2>\n" * (n // 10),
    "{% toc %} open tags": lambda n: "{% toc %}\n" + "<h1><div>" * (n // 9),
    # Liquid
    "highlight blocks": _lines("{% highlight a %}\nx\n{% endhighlight %}\n"),
    "{{ output }}": _lines("{{ page.title }} "),
    "{%- trims -%}": _lines("{%- x -%} "),
    # python-liquid's lexer searched to the end again from each unclosed opener
    "{{ x (unclosed)": _run("{{ x "),
    "{% raw %} (unclosed)": _lines("{% raw %} x "),
    "{% comment %} (unclosed)": _lines("{% comment %} x "),
}


def render_body(text: str) -> str:
    """Return ``text`` rendered as a post body (Liquid, Markdown, fragments restored)."""
    variables = {"page": {"title": "T", "toc": True}, "site": {}}
    try:
        liquid = render_liquid(text, path="_posts/2024-01-01-x.md", variables=variables)
    except SourceError as exc:  # refused (a Liquid syntax error): an answer in bounded time
        return str(exc)
    html = markdown_to_html(liquid.text, make_markdown())
    return restore_fragments(html, liquid.fragments)


def render_case(name: str, size: int) -> None:
    """Render the case ``name`` of :data:`CASES` at ``size`` (a target for :func:`run_bounded`)."""
    render_body(CASES[name](size))


def run_bounded(seconds: float, fn: Callable[..., Any], *args: Any) -> float | None:
    """Run ``fn(*args)`` in a child process; return the seconds it took (wall clock), or
    ``None`` when it did not finish within ``seconds`` (it is killed) or raised (its
    traceback goes to stderr). ``fn`` must be importable by name: the child is forked from
    a fork server that has loaded this module (never from the test process, whose threads
    a fork would copy mid-lock)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    start = time.perf_counter()
    child = context.Process(target=fn, args=args)
    child.start()
    child.join(seconds)
    if child.is_alive():
        child.kill()
        child.join()
        return None
    return time.perf_counter() - start if child.exitcode == 0 else None


def run_in_child(seconds: float, fn: Callable[..., Any], *args: Any) -> Any:
    """Return ``fn(*args)`` computed in a child process (forked as in :func:`run_bounded`);
    ``fn``'s result must pickle. ``seconds`` is only a safety net for a hang: past it the
    child is killed and :class:`TimeoutError` is raised; a child that raised or died raises
    :class:`RuntimeError` (its traceback went to stderr)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_send_result, args=(sender, fn, *args))
    child.start()
    sender.close()
    try:
        if not receiver.poll(seconds):
            raise TimeoutError(f"{getattr(fn, '__name__', fn)} did not finish in {seconds:g} s")
        try:
            return receiver.recv()
        except EOFError:
            raise RuntimeError(f"{getattr(fn, '__name__', fn)} failed in the child") from None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiver.close()


def _send_result(sender: Any, fn: Callable[..., Any], *args: Any) -> None:
    sender.send(fn(*args))
    sender.close()


LINEAR_LIMIT = 20.0
"""The most :func:`work_growth` may measure for input 8 times larger, for work to count as
linear: linear code measures 2 to 12 (a busy machine), a quadratic one 30 to 64."""

HANG_S = 600.0
"""The bound on a child of :func:`run_in_child` in the tests: only a safety net for a hang
(even a cubic case is measured in well under that)."""

SAMPLE_S = 0.02
"""CPU seconds each sample of :func:`work_growth` lasts at least (calls are repeated until
then, as ``timeit``'s autorange does), so fast calls are not measured at the clock's noise."""


def _cpu_per_call(fn: Callable[..., Any], args: tuple[Any, ...]) -> float:
    calls = 0
    gc.collect()
    gc.disable()  # a collection's cost depends on the whole heap, not on this call
    try:
        start = time.process_time()
        while True:
            fn(*args)
            calls += 1
            spent = time.process_time() - start
            if spent >= SAMPLE_S:
                return spent / calls
    finally:
        gc.enable()


def work_growth(
    fn: Callable[..., Any], small: tuple[Any, ...], large: tuple[Any, ...], repeat: int = 2
) -> float:
    """Return how many times more work ``fn(*large)`` does than ``fn(*small)``: the ratio of
    the least CPU time per call (process time, this process only, garbage collection off)
    over ``repeat`` interleaved samples of each. Run it in a child (:func:`run_in_child`).

    A ratio, not a speed: it does not depend on how fast or busy the machine is (CPU time
    excludes waiting; the least of interleaved samples drops a sample slowed by a
    neighbour). With ``large`` 8 times ``small``, linear work gives about 8 (less when a
    constant part dominates), quadratic 64, cubic 512."""
    least = [float("inf"), float("inf")]
    for _ in range(repeat):
        for i, args in enumerate((small, large)):
            least[i] = min(least[i], _cpu_per_call(fn, args))
    return least[1] / least[0] if least[0] > 0 else float("inf")
