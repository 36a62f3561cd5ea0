"""The schema of ``deploybot.toml``: every table a frozen dataclass whose fields are its keys.

Each key is declared once, here (:mod:`deploybot.config.options`): its type (the field's
annotation), default, range or choices, check and one-line help. :mod:`deploybot.config.load`
walks these records to read a file, and :mod:`deploybot.config.reference` to write
``config/deploybot.example.toml`` and ``docs/config-reference.md`` (``make config-reference``).

Adding a key is one declaration here, then its use. In the table's record, e.g.
``[source]``::

    ssh_command: str = key(
        "ssh", help="The ssh program git runs for ssh:// URLs", check=checks.check_one_line
    )

(an ``int`` needs its ``range=(low, high)``; a string with a fixed set of values its
``choices=``; a key unset by default, None or "", an ``example=`` for the example config);
a rule the value must follow goes in :mod:`.checks` as ``check_*(value, key, path)``. Then
``make config-reference`` writes the example config and the reference page again
(``tests/test_config_reference.py`` fails until it is run).

The rules joining several keys (``publish.url`` defaulting to ``source.url``, a token for
an http(s) URL only, ``notify.mbox`` required for ``transport = "mbox"``...) are the
loader's. A field declared with plain ``field()`` is no key: the loader sets it, to say which
key gave a value, for messages (so it is not compared: ``compare=False``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from deploybot.config import checks, queue
from deploybot.config.options import key, required_key, required_table, table, when_set
from deploybot.git.remote import DEFAULT_MAX_FETCH_BYTES, DEFAULT_TIMEOUT, Remote

TERA = 10**12
"""The top of the byte, character and step limits: far above any memory ("no limit" in
effect), and inside what sqlite (the build cache) and C code take (64 bits). Every integer
key has a range: past its maximum a value is surely a mistake."""

_TIMEOUT = "(0 < timeout <= 86400)"


@dataclass(frozen=True)
class SourceConfig:
    """``[source]``: the repository holding the site source.

    ``token_key`` (no TOML key) is the key that gave ``token_env`` (``publish.token_env``
    when it serves both sides of one repository).
    """

    url: str = field(
        metadata=required_key(
            help="REQUIRED. A path, file:///, http(s)://, git://, ssh://, git+ssh:// or "
            "[user@]host:path (no password in it: use an SSH key or token_env; no <helper>:: "
            "form); relative paths are relative to this file",
            check=checks.check_git_url,
            example="../site",
        )
    )
    branch: str = key(
        "main",
        help="The source branch: its name (main), not a refname (refs/heads/main); any "
        "name git check-ref-format accepts",
        check=checks.check_branch,
    )
    token_env: str | None = key(
        None,
        help="The environment variable holding an access token, for http(s) URLs only: sent "
        "as HTTP basic auth (user x-access-token, or the URL's own user); unset: exit 78; "
        "default publish.token_env when publish.url is unset",
        check=checks.check_env_name,
        example="DEPLOYBOT_SOURCE_TOKEN",
    )
    timeout: float = key(
        DEFAULT_TIMEOUT,
        help=f"Seconds one fetch may take in all, however steadily the server sends {_TIMEOUT}",
        check=checks.check_timeout,
    )
    max_fetch_bytes: int = key(
        DEFAULT_MAX_FETCH_BYTES,
        help="Bytes the server may send in one fetch (2 GiB); past it: exit 78",
        range=(1, TERA),
    )
    token_key: str = field(default="source.token_env", compare=False)

    def remote(self) -> Remote:
        """The source repository as :mod:`deploybot.git.repository` fetches it."""
        return Remote(
            self.url, "source.url", self.token_env, self.timeout, self.max_fetch_bytes,
            token_key=self.token_key,
        )  # fmt: skip


@dataclass(frozen=True)
class PublishConfig:
    """``[publish]``: where build commits go.

    Loaded, ``url`` is never empty (``source.url`` when unset), ``token_env`` is
    ``source.token_env`` when unset for one repository, and ``nojekyll`` a bool.
    ``url_key`` and ``token_key`` (no TOML keys): the keys that gave ``url`` and
    ``token_env`` (``source.url``, ``source.token_env`` when taken from the source).
    """

    url: str = key(
        "",
        help="The repository build commits are pushed to; default source.url (the publish "
        "branch may then not be source.branch: refused at load, in any URL spelling)",
        check=when_set(checks.check_git_url),
        example="../site-publish.git",
    )
    branch: str = key(
        "asf-site",
        help="The publish branch, as source.branch: gh-pages, not refs/heads/gh-pages",
        check=checks.check_branch,
    )
    author: str = key(
        "deploybot <deploybot@localhost>",
        help='"Name <email>" of each build commit; also its committer',
        check=checks.check_author,
    )
    message: str = key(
        "Build at {date}",
        help="The build commit's message; {date} is `date`'s default format: Tue Jul 14 "
        "09:12:04 PDT 2020",
        check=checks.check_message,
    )
    timezone: str | None = key(
        None,
        help="IANA name of the timezone of {date}; default the site's timezone, else UTC",
        check=checks.check_timezone,
        example="America/Los_Angeles",
    )
    keep: tuple[str, ...] = key(
        (),
        help='Path prefixes on the publish branch that builds never touch, e.g. ["docs/", '
        '".asf.yaml", "CNAME"]; by default none (a file committed there by hand goes with '
        "the next build)",
        check=checks.check_keep,
    )
    nojekyll: bool | None = key(
        None,
        help="An empty .nojekyll at the root (GitHub Pages then runs no Jekyll); default: on "
        'for branch = "gh-pages", off for any other',
        example=True,
    )
    max_removed: float = key(
        0.5,
        help="The publish guard: a build removing more than this fraction (0 to 1; 1: no "
        "limit) of the published files is not pushed (exit 1; run-once --force pushes it); "
        "the first build is not held to it",
        check=checks.check_fraction,
    )
    min_files: int = key(
        1,
        help="The publish guard: a build leaving fewer files than this is not pushed (0: no "
        "minimum)",
        range=(0, TERA),
    )
    broken_links: str = key(
        "warn",
        help="Each build checks its internal links and assets (href, src, srcset to paths of "
        "the site): warn lists the broken ones in the log, the email and the build record; "
        "fail also stops the publish (exit 1; run-once --force publishes); off: no check",
        choices=("warn", "fail", "off"),
    )
    token_env: str | None = key(
        None,
        help="As source.token_env, for fetching and pushing the publish branch; default "
        "source.token_env when url is unset (then this key alone serves the source too)",
        check=checks.check_env_name,
        example="DEPLOYBOT_PUBLISH_TOKEN",
    )
    timeout: float = key(
        DEFAULT_TIMEOUT,
        help=f"Seconds one fetch or push may take in all {_TIMEOUT}",
        check=checks.check_timeout,
    )
    max_fetch_bytes: int = key(
        DEFAULT_MAX_FETCH_BYTES,
        help="Bytes the server may send in one fetch of the publish branch",
        range=(1, TERA),
    )
    url_key: str = field(default="publish.url", compare=False)
    token_key: str = field(default="publish.token_env", compare=False)

    def remote(self) -> Remote:
        """The publish repository as :mod:`deploybot.git.repository` fetches and pushes it."""
        return Remote(
            self.url, self.url_key, self.token_env, self.timeout, self.max_fetch_bytes,
            token_key=self.token_key, section="publish",
        )  # fmt: skip


_LAYOUT = "Per render of a layout (untrusted code, sandboxed)"
_LIQUID = "What Liquid may use for one page"
_INPUT = "A bound on hostile input (past it the build fails naming the file)"


@dataclass(frozen=True)
class RenderConfig:
    """``[render]``: how the site is rendered, and the bounds of each build.

    Each limit past which a build fails is bad input (exit 1, naming the file, layout or
    code block).
    """

    theme: str = key(
        "default",
        help='"default" (the bundled theme, templates/) or a folder in the source tree',
        check=checks.check_theme,
    )
    themes: tuple[str, ...] = key(
        (),
        help='Where the gem themes _config.yml\'s "theme:" names are: "GEM=LOCATION" entries, a '
        'git URL or path with @REF ("minima=https://github.com/jekyll/minima@v2.5.1") or an '
        "installed gem's folder; over the GitHub Pages themes (minima, jekyll-theme-primer, "
        "jekyll-theme-cayman...: deploybot.watch.theme.DEFAULT_THEMES); a name not mapped "
        "stops the build",
        check=checks.check_themes,
        example=["minima=/usr/share/rubygems-integration/all/gems/minima-2.5.1"],
    )
    timezone: str | None = key(
        None,
        help="IANA timezone name; overrides _config.yml's timezone",
        check=checks.check_timezone,
        example="America/Los_Angeles",
    )
    feed_limit: int = key(20, help="Posts in atom.xml and rss.xml", range=(0, 1_000_000))
    typography: bool = key(True, help="kramdown's smart quotes and dashes (’ “ ” — – …)")
    footnotes: str = key(
        "kramdown",
        help="The footnote markup: kramdown (kramdown 2.x, Jekyll 4), kramdown1 (kramdown 1.x, "
        "no rel/role attributes), mistune (mistune's own) or none (no footnotes)",
        choices=("kramdown", "kramdown1", "mistune", "none"),
    )
    layout_max_steps: int = key(
        10_000_000,
        help=f"{_LAYOUT}: loop iterations, calls, filters, operators (+1 per list item, per "
        "1,000 characters)",
        range=(1, TERA),
    )
    layout_max_output: int = key(
        50_000_000,
        help=f"{_LAYOUT}: characters written, and the largest value a layout may build",
        range=(1, TERA),
    )
    layout_max_depth: int = key(
        50,
        help=f"{_LAYOUT}: macro, caller() and loop() calls nested in each other",
        range=(1, 1000),  # Python's own recursion limit stops deeper calls first
    )
    liquid_max_loop_iterations: int = key(
        1_000_000,
        help=f"{_LIQUID}: loop iterations (nested loops multiply; all loops of a page add up)",
        range=(1, TERA),
    )
    liquid_max_local_bytes: int = key(
        50_000_000,
        help=f"{_LIQUID}: bytes held by assign and capture variables",
        range=(1, TERA),
    )
    liquid_max_depth: int = key(
        50, help=f"{_LIQUID}: includes in includes, blocks in blocks", range=(1, 1000)
    )
    max_file_bytes: int = key(
        50_000_000,
        help=f"{_INPUT}: bytes of any source file read: post, page, layout, include, static "
        "file, _config.yml",
        range=(1, TERA),
    )
    max_page_bytes: int = key(
        50_000_000,
        help=f"{_INPUT}: bytes of one rendered page (after Liquid, Markdown and its layout)",
        range=(1, TERA),
    )
    max_yaml_size: int = key(
        10_000_000,
        help=f"{_INPUT}: front matter or _config.yml with its YAML aliases expanded (nodes "
        "plus scalar characters)",
        range=(1, TERA),
    )
    markdown_max_elements: int = key(
        1_000_000,
        help=f"{_INPUT}: the blocks, spans and HTML elements one page's Markdown makes (each "
        "held in memory until the page is rendered)",
        range=(1, TERA),
    )
    highlight_timeout: float = key(
        10.0,
        help="Seconds one page may spend highlighting code blocks (some Pygments lexers are "
        f"exponential on hostile input); past it the build fails naming the block {_TIMEOUT}",
        check=checks.check_timeout,
    )
    max_site_bytes: int = key(
        1_000_000_000,
        help="Bytes of output one build renders in all: pages, feeds, theme files (static "
        "files are copies and do not count)",
        range=(1, TERA),
    )
    jobs: int = key(
        0,
        help="Processes a full build renders pages and posts in: 0 = one per CPU, 1 = no "
        "worker processes; the output is the same for any value",
        range=(0, 256),  # more than 256 processes is surely a mistake
    )
    highlight_cache_bytes: int = key(
        100_000_000,
        help="Highlighted code blocks kept under state.dir across builds (compressed bytes; "
        "0 keeps none)",
        range=(0, TERA),
    )


@dataclass(frozen=True)
class SmtpConfig:
    """``[notify.smtp]``: the SMTP server of ``notify.transport = "smtp"``."""

    host: str = key("localhost", help="The SMTP server's host name or IP address",
                    check=checks.check_host)  # fmt: skip
    port: int = key(25, help="Its TCP port", range=(1, 65535))
    security: str = key(
        "none",
        help="none, starttls (STARTTLS after connecting) or ssl (TLS from the start)",
        choices=("none", "starttls", "ssl"),
    )
    username: str | None = key(
        None,
        help="The user to log in as (with the password of password_env)",
        check=checks.check_one_line,
        example="deploybot",
    )
    password_env: str | None = key(
        None,
        help="The environment variable holding the password",
        check=checks.check_env_name,
        example="DEPLOYBOT_SMTP_PASSWORD",
    )
    timeout: float = key(
        30.0,
        help=f"Seconds for the whole exchange, connect to QUIT {_TIMEOUT}",
        check=checks.check_timeout,
    )


@dataclass(frozen=True)
class WebhookConfig:
    """``[notify.webhook]``: a JSON summary POSTed to a chat system's incoming webhook;
    off while neither ``url`` nor ``url_env`` is set."""

    url: str = key(
        "",
        help="The incoming webhook's http(s) URL; off while neither url nor url_env is set",
        check=when_set(checks.check_http_url),
        example="https://chat.example.org/hooks/xxx",
    )
    url_env: str | None = key(
        None,
        help="Or: the environment variable holding the URL (chat webhook URLs embed their secret)",
        check=checks.check_env_name,
        example="DEPLOYBOT_WEBHOOK_URL",
    )
    timeout: float = key(
        10.0,
        help=f"Seconds for the whole POST, connect to the end of the answer {_TIMEOUT}",
        check=checks.check_timeout,
    )


_MULTIMAIL = "git-multimail's"  # the limits below are its: emailMaxLineLength, ...


@dataclass(frozen=True)
class NotifyConfig:
    """``[notify]``: how the commit email is delivered and what it says.

    ``sender`` is the TOML key ``from``. Loaded, ``repository_url`` is never empty
    (``publish.url`` when unset) and ``pusher`` neither (the publish author's name).
    """

    transport: str = key(
        "none",
        help="How the commit email goes: smtp, sendmail, mbox, stdout or none",
        choices=("smtp", "sendmail", "mbox", "stdout", "none"),
    )
    to: tuple[str, ...] = key(
        (),
        help='Bare addresses, e.g. ["commits@example.org"]; required unless transport = "none"',
        check=checks.check_to,
    )
    sender: str = key(
        "deploybot@localhost",
        toml="from",
        help='"addr@host" or "Name <addr@host>", e.g. "deploybot@example.org"',
        check=checks.check_sender,
    )
    mbox: Path | None = key(
        None,
        help='The mbox file of transport = "mbox": a regular file deploybot can write (or '
        "create), not under /proc or /sys",
        check=checks.check_file_location,
        example="commits.mbox",
    )
    repository_url: str = key(
        "",
        help="The repository URL shown in the email; default publish.url",
        check=checks.check_url_text,
        example="https://example.org/site.git",
    )
    pusher: str = key(
        "",
        help='"<pusher> pushed a commit"; default the publish author\'s name',
        check=checks.check_one_line,
        example="ci",
    )
    max_line_length: int = key(
        500,
        help=f"Longer body lines are cut to N-7 characters + ' [...]' ({_MULTIMAIL} "
        "emailMaxLineLength); 0 = no limit",
        range=(8, 1_000_000),  # the smallest useful: a cut keeps N-7 characters + " [...]"
        zero_is_no_limit=True,
    )
    max_lines: int = key(
        10000,
        help=f"Body lines kept, then '... N lines suppressed ...' ({_MULTIMAIL} emailMaxLines); "
        "0 = no limit",
        range=(1, 10_000_000),
        zero_is_no_limit=True,
    )
    subject_max_length: int = key(
        500,
        help=f"The commit subject in a Subject: is cut to N-6 characters + ' [...]' "
        f"({_MULTIMAIL} subjectMaxLength); 0 = no limit",
        range=(7, 1_000_000),
        zero_is_no_limit=True,
    )
    max_commit_emails: int = key(
        50,
        help="More new commits than this since the last email: the summary email only "
        f"({_MULTIMAIL} maxCommitEmails); 0 = no limit",
        range=(1, 100_000),
        zero_is_no_limit=True,
    )
    smtp: SmtpConfig = table(SmtpConfig, help='The SMTP server of transport = "smtp".')
    webhook: WebhookConfig = table(
        WebhookConfig, help="A JSON summary of each build POSTed to a chat incoming webhook."
    )


@dataclass(frozen=True)
class StatusConfig:
    """``[status]``: a commit status on the forge for each build of a source commit
    (:mod:`deploybot.notify.deliver.forge_status`); off while ``api`` is unset. Loaded,
    ``url``, ``repository``, ``context`` and ``target_url`` hold their defaults when unset
    (:mod:`deploybot.config.forges`)."""

    api: str | None = key(
        None,
        help="The forge's API: github, gitea (Forgejo too) or gitlab; unset: no commit statuses",
        choices=("github", "gitea", "gitlab"),
        example="github",
    )
    url: str = key(
        "",
        help="The API base: default https://api.github.com (github), https://gitlab.com/api/v4 "
        "(gitlab); required for gitea (https://HOST, /api/v1 is added); GitHub Enterprise: "
        "https://HOST/api/v3",
        check=when_set(checks.check_http_url),
        example="https://gitea.example.org/api/v1",
    )
    repository: str = key(
        "",
        help="owner/name (gitlab: the project's numeric id or group/project path); default "
        "read off source.url",
        check=checks.check_one_line,
        example="apache/tvm-site",
    )
    token_env: str | None = key(
        None,
        help="REQUIRED with api: the environment variable holding the API token (GitHub: "
        "statuses write; Gitea: write:repository; GitLab: api scope); never in this file",
        check=checks.check_env_name,
        example="DEPLOYBOT_STATUS_TOKEN",
    )
    target_url: str = key(
        "",
        help="The link each status carries: the published site; default https://OWNER.github."
        "io/NAME/ for a gh-pages branch on github.com, else none",
        check=when_set(checks.check_http_url),
        example="https://www.example.org/",
    )
    context: str = key(
        "",
        help="The status's name on the forge (GitLab: name); default deploybot/<daemon.name, "
        "else publish.branch>",
        check=checks.check_one_line,
        example="deploybot/www",
    )
    timeout: float = key(
        10.0,
        help="Seconds for the whole POST, connect to the end of the answer (the pending status "
        f"before a build: at most 2) {_TIMEOUT}",
        check=checks.check_timeout,
    )


@dataclass(frozen=True)
class StateConfig:
    """``[state]``: the state folder (loaded: absolute, symlinks resolved)."""

    dir: Path = key(
        Path(".deploybot"),
        help="Mirrors, caches, outbox and lock; made private (0700); must be writable",
        check=checks.check_folder_location,
    )


@dataclass(frozen=True)
class DaemonConfig:
    """``[daemon]``: ``deploybot serve`` (:mod:`deploybot.serve`). In the daemon's config (the
    first ``--config``) every key counts; in a site's config only ``name`` and
    ``secret_env`` do. Loaded, a ``unix:`` listen path and ``sites`` are absolute."""

    listen: str = key(
        "127.0.0.1:8787",
        help="HOST:PORT ([::1]:8787 for IPv6; port 0 = any free port) or unix:/path "
        "(relative to this file)",
        check=checks.check_listen,
    )
    secret_env: str | None = key(
        None,
        help="The environment variable holding the webhook secret; unset: webhooks are "
        "refused (401) and only the poller builds",
        check=checks.check_env_name,
        example="DEPLOYBOT_WEBHOOK_SECRET",
    )
    poll_interval: int = key(
        300,
        help=(
            "Seconds between two looks at each source branch (0 = never, which needs a webhook"
            " secret for every site; at most 7 days)"
        ),
        range=(0, 7 * 86400),
    )
    max_body_bytes: int = key(
        25_000_000,
        help="A webhook body over this is refused (413) before it is read (GitHub's cap)",
        range=(1, 10**10),
    )
    workers: int = key(
        1,
        help="Sites built at once; one site never builds twice at once, and fetches wait "
        "apart (up to 8, or workers), so a hung source holds no worker",
        range=(1, 1024),
    )
    stop_timeout: float = key(
        300.0,
        help=f"Seconds a stop waits for running builds before ending them {_TIMEOUT}",
        check=checks.check_timeout,
    )
    read_timeout: float = key(
        10.0,
        help=f"Seconds a client has to send its headers, and again its body {_TIMEOUT}",
        check=checks.check_timeout,
    )
    warm_builder: bool = key(
        True,
        help="Fork each build from a process that imported the build's modules once (no "
        "start-up per build); false: a new interpreter per build. Read at start",
    )
    sites: str = key(
        "",
        help="More site configs: a glob, relative to this file",
        example="sites/*.toml",
    )
    name: str = key(
        "",
        help="This site's name in POST /webhook/<name> (letters, digits, '.', '_', '-'); "
        "default the file's stem",
        check=when_set(checks.check_site_name),
        example="www",
    )
    status_page: bool = key(
        True,
        help="The status page at / and /sites/<name>: on a loopback address or a unix: "
        "socket, open; listening elsewhere, only with status_token_env (false: never)",
    )
    status_token_env: str | None = key(
        None,
        help="The environment variable holding the status page's token; set, the page "
        "asks for it on any address (a cookie, ?token= or Authorization: Bearer)",
        check=checks.check_env_name,
        example="DEPLOYBOT_STATUS_TOKEN",
    )


@dataclass(frozen=True)
class QueueConfig:
    """``[queue]``: where ``deploybot serve`` queues builds: its own in-process queue, or
    Redis, where ``deploybot worker`` processes run them (:mod:`deploybot.serve.fleet`). In
    a site's config only ``name`` counts."""

    backend: str = key(
        "local",
        help='"local": serve builds by itself; "redis": `deploybot worker` processes build',
        choices=("local", "redis"),
    )
    url: str = key(
        "",
        help='Required for "redis": redis://, rediss:// or unix:///path?db=0 (no password in '
        "it: password_env)",
        check=when_set(queue.check_redis_url),
        example="redis://127.0.0.1:6379/0",
    )
    password_env: str | None = key(
        None,
        help="The environment variable holding Redis' password",
        check=checks.check_env_name,
        example="DEPLOYBOT_REDIS_PASSWORD",
    )
    name: str = key(
        "deploybot",
        help="The shared RQ queue (1 to 64 letters, digits, '.', '_', '-'); a site's own "
        "config may set only this key",
        check=queue.check_queue_name,
    )
    affinity_timeout: float = key(
        30.0,
        help=f"Seconds a build waits for the worker that built its site last {_TIMEOUT}",
        check=checks.check_timeout,
    )
    lease_ttl: float = key(
        60.0,
        help="Seconds a dead worker's site lease lasts (renewed every third of it; 1 or more)",
        check=queue.check_lease,
    )
    job_timeout: float = key(
        3600.0,
        help=f"Seconds a build may run before its worker ends it {_TIMEOUT}",
        check=checks.check_timeout,
    )
    heartbeat_timeout: float = key(
        10.0,
        help="Seconds after a worker's last heartbeat (sent every fifth of it) that it counts "
        "as down: its queue and its running build's lease go to the others (1 or more)",
        check=queue.check_lease,
    )


@dataclass(frozen=True)
class PreviewConfig:
    """``[preview]``: branch previews (docs/previews.md). Off while ``branches`` is empty.

    Loaded, ``url`` is never empty (``publish.url`` when unset) and ``token_env`` is
    ``publish.token_env`` when ``url`` is unset. ``url_key`` (no TOML key): the key that gave
    ``url``.
    """

    branches: tuple[str, ...] = key(
        (),
        help='Globs (fnmatch: "feature/*", "pr-*") of the source branches built as previews '
        "under /preview/<branch>/ of publish_branch; source.branch never is; empty: no previews",
        check=checks.check_branch_globs,
        example=["feature/*"],
    )
    publish_branch: str = key(
        "previews",
        help="The branch previews are published on, one folder preview/<branch>/ each; never "
        "publish.branch of the same repository",
        check=checks.check_branch,
    )
    url: str = key(
        "",
        help="The repository of publish_branch; default publish.url (relative paths as "
        "publish.url's)",
        check=when_set(checks.check_git_url),
        example="../site-previews.git",
    )
    token_env: str | None = key(
        None,
        help="As publish.token_env, for url; default publish.token_env when url is unset",
        check=checks.check_env_name,
        example="DEPLOYBOT_PREVIEW_TOKEN",
    )
    site_url: str = key(
        "",
        help="Where publish_branch is served: a preview's address is this + /preview/<branch>/ "
        "(the run's result and the commit status link to it); unset: no address is known",
        check=when_set(checks.check_http_url),
        example="https://previews.example.org",
    )
    notify: bool = key(
        False,
        help="Email each preview (its subject and first line say it is a preview) with "
        "[notify]'s transport and recipients",
    )
    url_key: str = field(default="preview.url", compare=False)

    def remote(self, publish: PublishConfig) -> Remote:
        """The preview repository as :mod:`deploybot.git.repository` fetches and pushes it,
        within ``publish``'s ``timeout`` and ``max_fetch_bytes``."""
        return Remote(
            self.url, self.url_key, self.token_env, publish.timeout, publish.max_fetch_bytes,
            token_key="preview.token_env", section="publish",
        )  # fmt: skip


@dataclass(frozen=True)
class Config:
    """The whole configuration. ``path`` is the file it came from, resolved (None when built
    in code); ``base`` the folder its relative paths were resolved against
    (:func:`deploybot.git.locations.config_base`: a symlinked file's own folder, not its
    target's); ``raw_urls`` ``source.url`` and ``publish.url`` as the file wrote them
    (``publish.url`` defaulting to ``source.url``), which the no-op stamp resolves again
    (:mod:`deploybot.pipeline.noop`). None of these three is a TOML key."""

    source: SourceConfig = field(
        metadata=required_table(help="The repository holding the site source.")
    )
    publish: PublishConfig = table(PublishConfig, help="Where build commits go.")
    render: RenderConfig = table(
        RenderConfig,
        help="How the site is rendered, and the bounds of each build (past one: exit 1, "
        "naming the file).",
    )
    notify: NotifyConfig = table(
        NotifyConfig, help="How the commit email is delivered and what it says."
    )
    state: StateConfig = table(StateConfig, help="The state folder.")
    daemon: DaemonConfig = table(
        DaemonConfig,
        help="`deploybot serve`: the webhook daemon (docs/daemon.md). In the "
        "daemon's config (the first --config) every key counts; in a site's own config only "
        "`name` and `secret_env` do (any other key there is an error).",
    )
    path: Path | None = None
    queue: QueueConfig = table(
        QueueConfig,
        help="Where `deploybot serve` queues builds (docs/fleet.md). In a "
        "site's own config only `name` counts.",
    )
    base: Path | None = None
    raw_urls: tuple[str, str] | None = None
    preview: PreviewConfig = table(
        PreviewConfig,
        help="Branch previews: branches matching `branches` built under /preview/<branch>/ "
        "(docs/previews.md).",
    )
    status: StatusConfig = table(
        StatusConfig,
        help="A commit status for each build, posted to the forge (docs/forge-status.md): "
        "pending as it starts, then success, failure or error.",
    )
