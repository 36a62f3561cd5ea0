"""What a run imports: a run pays for every module it loads, so what it does not use stays out.

Each check runs in a fresh interpreter (``sys.modules`` of this one holds everything the
other tests imported).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dulwich.repo import Repo

from tests.gitrepo import commit_files
from tests.smallsite import SmallSite

HEAVY = ("liquid", "babel", "smtplib", "ssl", "urllib.request", "http.client", "filelock", "tqdm")


def loaded_after(code: str, *args: str) -> set[str]:
    """The modules of :data:`HEAVY` loaded once ``code`` ran in a new interpreter."""
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True
    )
    return set(done.stdout.split("\n")[-2].split())


def test_the_pipeline_imports_no_smtp_tls_liquid_or_lock_library() -> None:
    modules = "deploybot.cli.commands, deploybot.pipeline.run, deploybot.render.engine.incremental"
    assert loaded_after(f"import {modules}") == set()


def test_a_site_without_liquid_builds_without_python_liquid(tmp_path: Path) -> None:
    """No page holds '{{' or '{%': Jekyll skips Liquid for them, and so python-liquid (with
    Babel) is never imported; the build publishes and emails through an mbox."""
    site = SmallSite(tmp_path)
    run = (
        "import sys\nfrom deploybot.pipeline import run as pipeline\n"
        "from deploybot.config.load import load_config\n"
        "result = pipeline.run_once(load_config(sys.argv[1]))\n"
        "assert result.status == 'published' and result.mail_sent, result"
    )
    assert loaded_after(run, str(site.config)) == set()
    commit_files(site.source, {"_posts/2023-01-04-l.md": b"---\ntitle: L\n---\n{{ page.title }}\n"})
    assert "liquid" in loaded_after(run, str(site.config))


def test_the_no_op_path_loads_no_library_it_does_without() -> None:
    """``run-once`` with nothing to do is a few milliseconds of imports: the no-op module
    (its check of the stamp) and the journal's line priorities it sets up first load neither
    dulwich nor click, tomllib, typing or enum."""
    probe = (
        "import sys\nimport deploybot.pipeline.noop, deploybot.support.journal\n"
        "print(' '.join(m for m in ('dulwich', 'click', 'tomllib', 'typing', 'enum')"
        " if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == []


def modules_of_command(tmp_path: Path, *argv: str) -> set[str]:
    """Every module in ``sys.modules`` when ``deploybot ARGV`` (``python -m deploybot``, run
    by :mod:`runpy` in a new interpreter) has ended, whatever its exit status."""
    listing = tmp_path / "modules.txt"
    probe = (
        "import runpy, sys\n"
        "out, sys.argv = sys.argv[1], ['deploybot', *sys.argv[2:]]\n"
        "try:\n    runpy.run_module('deploybot', run_name='__main__', alter_sys=True)\n"
        "except SystemExit:\n    pass\n"
        "open(out, 'w').write('\\n'.join(sorted(sys.modules)))\n"
    )
    subprocess.run(
        [sys.executable, "-c", probe, str(listing), *argv], capture_output=True, check=True
    )
    return set(listing.read_text().split("\n"))


NOT_FOR_PLAIN_MARKDOWN = (
    "liquid",  # python-liquid: no page holds Liquid
    "sass",  # libsass: no stylesheet
    "ctypes",
    "lxml",  # no link check (build does not check links) and no plugin needs it
    "pygments.lexers",  # no code block
    "pygments.formatters",
    "multiprocessing",  # too small for worker processes
    "deploybot.notify.gitlog",  # no email is composed
    "deploybot.notify.compose.email",
    "deploybot.pipeline.run",
)


def test_a_plain_markdown_build_loads_only_what_it_uses(tmp_path: Path) -> None:
    """``deploybot build`` of a Markdown-only site (no Liquid, no code, no stylesheet, no
    ``_layouts``: the bundled theme) loads none of the libraries it has no use for."""
    site = tmp_path / "site"
    (site / "_posts").mkdir(parents=True)
    (site / "index.md").write_text("# Home\n\nHello *world*.\n")
    (site / "_posts/2024-01-02-a.md").write_text("---\ntitle: A\n---\nSome **text**.\n")
    loaded = modules_of_command(tmp_path, "build", str(site), str(tmp_path / "out"))
    assert (tmp_path / "out/2024/01/02/a.html").is_file()
    assert {"mistune", "jinja2", "deploybot.render.engine.full"} <= loaded  # it did build
    assert sorted(m for m in NOT_FOR_PLAIN_MARKDOWN if m in loaded) == []


def test_help_loads_no_render_or_pipeline_module(tmp_path: Path) -> None:
    loaded = modules_of_command(tmp_path, "serve", "--help")
    assert "click" in loaded
    heavy = ("deploybot.render", "deploybot.pipeline", "deploybot.notify", "jinja2", "mistune")
    assert sorted(m for m in loaded if m.startswith(heavy)) == []


def test_the_pipeline_loads_git_log_and_diff_code_only_to_compose_an_email() -> None:
    """Importing the pipeline (every ``run-once``) loads no diff, log or composer module:
    a run with mail off never needs them; only the subject reader (the build journal's)."""
    probe = (
        "import sys, deploybot.pipeline.run, deploybot.cli.report\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('deploybot.notify.gitlog'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == [
        "deploybot.notify.gitlog",
        "deploybot.notify.gitlog.excerpt",
        "deploybot.notify.gitlog.message",
    ]


NOT_FOR_NOTIFY = (
    "dulwich.client",  # no fetch or push: the commit is read from the repository on disk
    "dulwich.index",
    "deploybot.git.repository",  # the transports (damage is deploybot.git.damage's)
    "deploybot.notify.stage",  # no outbox: the email goes straight to its transport
    "deploybot.notify.announce",
    "deploybot.notify.deliver.outbox",
    "deploybot.notify.deliver.webhook",
    "deploybot.notify.gitlog.merge",  # not a merge
    "deploybot.state.statedir",  # no config, so no state folder
)


def test_notify_of_a_commit_loads_no_transport_outbox_or_merge_code(tmp_path: Path) -> None:
    """``deploybot notify --commit X --transport stdout`` (the bench's email measurement)
    reads the commit and prints its email: none of the pipeline's fetch, push, outbox or
    webhook code, and the merge diff only for a merge."""
    repo = tmp_path / "repo.git"
    Repo.init_bare(str(repo), mkdir=True).close()
    commit = commit_files(repo, {"a.txt": b"one\n", "b.bin": b"\0\1"})
    loaded = modules_of_command(
        tmp_path,
        "notify",
        "--commit",
        commit,
        "--repo",
        str(repo),
        "--branch",
        "main",
        "--transport",
        "stdout",
    )
    assert {"deploybot.notify.gitlog.commit_log", "deploybot.notify.compose.email"} <= loaded
    assert sorted(m for m in NOT_FOR_NOTIFY if m in loaded) == []


LIQUID_SITE = {
    "_layouts/default.html": b"<html><body>{{ content }}</body></html>\n",
    "_layouts/post.html": b"---\nlayout: default\n---\n<h1>{{ page.title }}</h1>{{ content }}\n",
    "_posts/2023-01-05-code.md": (
        b"---\nlayout: post\ntitle: Code\n---\nSome code:\n\n```python\ndef f(x):\n"
        b"    return x + 1\n```\n\n{% highlight ruby %}\nx = 1\n{% endhighlight %}\n"
    ),
}

NOT_FOR_A_LIQUID_EDIT = (
    "jinja2",  # the site has _layouts/: the bundled Jinja2 theme is never made
    "deploybot.render.theme.layouts",
    "deploybot.render.theme.sandbox",
    "deploybot.render.engine.tracking_loader",
    "pygments.lexers.python",  # its blocks are in the highlight cache: no lexer is made
    "pygments.lexers.ruby",
    "pygments.formatters",
    "multiprocessing",  # one post: no render workers
)


def test_a_one_post_edit_of_a_liquid_site_loads_no_jinja2_and_no_lexer(tmp_path: Path) -> None:
    """``run-once`` after a one-post edit of a site with its own Liquid layouts and code
    blocks (the bench's shape): Liquid renders it, its code comes from the highlight cache,
    and it is published and emailed, with none of :data:`NOT_FOR_A_LIQUID_EDIT` loaded."""
    site = SmallSite(tmp_path)
    commit_files(site.source, LIQUID_SITE, "Layouts")
    first = modules_of_command(tmp_path, "run-once", "--config", str(site.config))
    assert {"liquid", "pygments.lexers.python"} <= first  # the first build highlighted
    before = site.head()
    edit = {"_posts/2023-01-05-code.md": LIQUID_SITE["_posts/2023-01-05-code.md"] + b"More.\n"}
    commit_files(site.source, edit, "Edit")
    loaded = modules_of_command(tmp_path, "run-once", "--config", str(site.config))
    assert site.head() != before and site.emails()[-1] == site.head()  # published, emailed
    assert {"liquid", "deploybot.render.engine.incremental", "deploybot.notify.gitlog"} <= loaded
    assert sorted(m for m in NOT_FOR_A_LIQUID_EDIT if m in loaded) == []
