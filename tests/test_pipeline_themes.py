"""A site's remote theme through ``run_once``: fetched into the state folder, pinned in the
build record, built again (incrementally) when it moves, and remade by ``deploybot build
--rev --theme-commit`` byte for byte."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner
from dulwich.repo import Repo

from deploybot.cli.commands import main
from deploybot.config.load import load_config
from deploybot.pipeline import run as pipeline
from deploybot.record import note, reasons
from tests.gitcli import run_git
from tests.gitrepo import commit_files, read_branch

THEME_FILES = {
    "_layouts/default.html": b"<html>{% include nav.html %}{{ content }}</html>\n",
    "_layouts/post.html": b"---\nlayout: default\n---\n<article>{{ content }}</article>\n",
    "_includes/nav.html": b"<nav>theme nav</nav>\n",
    "assets/style.css": b"body { color: black }\n",
}


class Site:
    """A bare source repo, a bare publish repo, a theme repo and a config."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.source, self.publish, self.theme = (
            root / "source.git", root / "publish.git", root / "theme.git",
        )  # fmt: skip
        for repo in (self.source, self.publish, self.theme):
            Repo.init_bare(str(repo), mkdir=True).close()
        self.config_path = root / "deploybot.toml"
        self.config_path.write_text(
            '[source]\nurl = "source.git"\n[publish]\nurl = "publish.git"\n'
            'author = "Bot <bot@example.org>"\n[render]\ntimezone = "UTC"\n'
            f'[state]\ndir = "{root / "state"}"\n'
        )
        self.config = load_config(self.config_path)
        self.when = 1_700_000_000

    def commit_theme(self, changes: dict[str, bytes | None]) -> str:
        self.when += 60
        return commit_files(self.theme, changes, "Theme", when=self.when)

    def commit_site(self, changes: dict[str, bytes | None]) -> str:
        self.when += 60
        return commit_files(self.source, changes, "Site", when=self.when)

    def run(self) -> pipeline.RunResult:
        now = datetime.fromtimestamp(self.when + 1, UTC)
        return pipeline.run_once(self.config, now=lambda: now)

    def record(self) -> dict[str, str]:
        args = ("notes", "--ref=deploybot", "show", self.config.publish.branch)
        return note.note_fields(run_git(self.publish, *args, name="A", email="a@example.org"))

    def published(self) -> dict[str, bytes]:
        return read_branch(self.publish, self.config.publish.branch)


def site_files(theme: Path) -> dict[str, bytes | None]:
    return {
        "_config.yml": f"title: T\nremote_theme: {theme}@main\n".encode(),
        "_posts/2023-01-02-a.md": b"---\nlayout: post\n---\nA\n",
        "about.md": b"---\nlayout: default\n---\nAbout\n",
    }


def test_a_remote_theme_is_pinned_and_a_moved_theme_builds_again(tmp_path: Path) -> None:
    site = Site(tmp_path)
    first = site.commit_theme(dict(THEME_FILES))
    source = site.commit_site(site_files(site.theme))
    done = site.run()
    assert done.status is pipeline.RunStatus.PUBLISHED
    record = site.record()
    assert (record[note.THEME], record[note.THEME_COMMIT]) == (f"{site.theme}@main", first)
    files = site.published()
    assert files["2023/01/02/a.html"] == (
        b"<html><nav>theme nav</nav>\n<article><p>A</p>\n</article>\n</html>\n"
    )
    assert files["assets/style.css"] == THEME_FILES["assets/style.css"]
    assert (tmp_path / "state" / "themes").is_dir()
    assert site.run().status is pipeline.RunStatus.UP_TO_DATE  # the theme has not moved

    second = site.commit_theme({"_includes/nav.html": b"<nav>moved</nav>\n"})
    done = site.run()
    assert done.status is pipeline.RunStatus.PUBLISHED
    record = site.record()
    assert record[note.REASON] == note.Reason.THEME.value
    assert reasons.why_built(record) == "the theme moved"  # it was a KeyError: no email, no log
    assert record[note.BUILD_KIND] == "incremental"
    shown = CliRunner().invoke(main, ["log", "-n", "1", "--config", str(site.config_path)])
    assert shown.exit_code == 0, shown.output
    assert "the theme moved" in shown.output
    assert (record[note.THEME], record[note.THEME_COMMIT]) == (f"{site.theme}@main", second)
    moved = site.published()
    assert moved["2023/01/02/a.html"].startswith(b"<html><nav>moved</nav>")
    assert moved["about.html"].startswith(b"<html><nav>moved</nav>")

    # the first build, remade from its record's source commit and theme pin
    out = tmp_path / "out"
    command = ["build", str(site.source), str(out), "--rev", source, "--theme-commit", first]
    result = CliRunner().invoke(main, [*command, "--config", str(site.config_path)])
    assert result.exit_code == 0, result.output
    remade = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    remade.pop(".deploybot-build")
    assert remade == {p: b for p, b in files.items() if p != ".nojekyll"}


def test_every_reason_a_record_can_give_has_its_words() -> None:
    words = {member: reasons.why_built({note.REASON: member.value}) for member in note.Reason}
    assert None not in words.values(), words
    assert words[note.Reason.THEME] == "the theme moved"
