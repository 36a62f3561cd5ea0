"""The schema of ``deploybot.toml``: every section a frozen dataclass whose fields are its keys.

Each field is one key, declared once: its type and default are the validation rule
(:mod:`deploybot.config.load` reads a file into these), its doc in the class docstring (``from``
is spelled ``sender`` in Python). A field with :data:`_DERIVED` metadata is no key: it records
which key gave a value, for messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from deploybot.git.remote import DEFAULT_MAX_FETCH_BYTES, DEFAULT_TIMEOUT, Remote

_DERIVED: dict[str, bool] = {"key": False}
"""The metadata of a field that is no TOML key: which key gave a value, set when the
config is resolved, for messages only (so not compared: ``compare=False``)."""


@dataclass(frozen=True)
class SourceConfig:
    """``[source]``: the repository holding the site source.

    ``token_env`` names the environment variable holding an access token for an http(s)
    ``url`` (sent as HTTP basic auth: the URL's user, else ``x-access-token``); ``timeout``
    (s) bounds one fetch in all, ``max_fetch_bytes`` what its server may send
    (:class:`deploybot.git.remote.Remote`). With ``publish.url`` unset (one repository),
    ``token_env`` defaults to ``publish.token_env``; ``token_key`` (no TOML key) is the
    key that gave it.
    """

    url: str
    branch: str = "main"
    token_env: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_fetch_bytes: int = DEFAULT_MAX_FETCH_BYTES
    token_key: str = field(default="source.token_env", compare=False, metadata=_DERIVED)

    def remote(self) -> Remote:
        """The source repository as :mod:`deploybot.git.repository` fetches it."""
        return Remote(
            self.url, "source.url", self.token_env, self.timeout, self.max_fetch_bytes,
            token_key=self.token_key,
        )  # fmt: skip


@dataclass(frozen=True)
class PublishConfig:
    """``[publish]``: where build commits go.

    ``url`` defaults to ``source.url`` (and then ``token_env`` to ``source.token_env``);
    ``timezone`` (IANA) is used for ``{date}`` in ``message`` and defaults to the site's
    timezone, else UTC; ``keep`` lists path prefixes on the publish branch that builds never
    touch. ``nojekyll``: the published tree gets an empty ``.nojekyll`` (so GitHub Pages
    does not run Jekyll again); unset, on for the branch ``gh-pages`` only (resolved to a
    bool when loaded). The publish guard: a build that would remove more than
    ``max_removed`` (a fraction, 0 to 1) of the published files, or leave fewer than
    ``min_files`` (0: no minimum), is not pushed. ``token_env``, ``timeout`` and
    ``max_fetch_bytes``: as :class:`SourceConfig`'s, for each fetch and push of the publish
    branch. ``url_key`` and ``token_key`` (no TOML keys): the keys that gave ``url`` and
    ``token_env`` (``source.url``, ``source.token_env`` when taken from the source).
    """

    url: str = ""
    branch: str = "asf-site"
    author: str = "deploybot <deploybot@localhost>"
    message: str = "Build at {date}"
    timezone: str | None = None
    keep: tuple[str, ...] = ()
    nojekyll: bool | None = None
    max_removed: float = 0.5
    min_files: int = 1
    token_env: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_fetch_bytes: int = DEFAULT_MAX_FETCH_BYTES
    url_key: str = field(default="publish.url", compare=False, metadata=_DERIVED)
    token_key: str = field(default="publish.token_env", compare=False, metadata=_DERIVED)

    def remote(self) -> Remote:
        """The publish repository as :mod:`deploybot.git.repository` fetches and pushes it."""
        return Remote(
            self.url, self.url_key, self.token_env, self.timeout, self.max_fetch_bytes,
            token_key=self.token_key, section="publish",
        )  # fmt: skip


@dataclass(frozen=True)
class RenderConfig:
    """``[render]``: ``theme`` is ``"default"`` (the bundled theme) or a folder in the source.

    ``typography`` turns kramdown's smart quotes and dashes on or off; ``footnotes`` picks the
    footnote markup: ``kramdown`` (kramdown 2.x, Jekyll 4), ``kramdown1`` (kramdown 1.x, no
    ``rel``/``role`` attributes), ``mistune`` (mistune's own) or ``none`` (no footnotes).

    ``layout_max_steps``, ``layout_max_output`` (characters) and ``layout_max_depth`` bound
    each render of a layout (layouts are untrusted code; see ``render.sandbox``): each is at
    least 1, and a layout past one is bad input (exit 1, naming the layout).
    Limits on hostile or broken input (each more than 0; exceeding one fails the build with
    exit 1 naming the file): ``max_file_bytes`` (bytes of any source file read: post, page,
    layout, include, static file, ``_config.yml``), ``liquid_max_loop_iterations``,
    ``liquid_max_local_bytes`` and ``liquid_max_depth`` (what Liquid may use for one page:
    see :class:`deploybot.render.model.LiquidLimits`), ``max_page_bytes`` (bytes of one
    rendered page after Liquid, Markdown and its layout), ``max_yaml_size`` (a YAML
    document with its aliases expanded: nodes plus scalar characters) and
    ``markdown_max_elements`` (the blocks, spans and HTML elements one page's Markdown
    makes: each is held in memory until the page is rendered).
    ``max_site_bytes``: the bytes of output one build renders in all (pages, feeds, theme
    files; static files are copies and do not count).
    ``highlight_timeout``: the seconds one page may spend highlighting code blocks (some
    Pygments lexers are exponential on hostile input); past it the build fails naming the
    block and its language (finite, more than 0, at most a day).
    ``jobs``: the processes a full build renders pages and posts in (0: one per CPU; 1: no
    worker processes); the output is the same for any value. ``highlight_cache_bytes``:
    the bound of the highlighted code blocks kept under ``state.dir`` across builds
    (compressed bytes; 0 keeps none).
    """

    theme: str = "default"
    timezone: str | None = None
    feed_limit: int = 20
    typography: bool = True
    footnotes: str = "kramdown"
    layout_max_steps: int = 10_000_000
    layout_max_output: int = 50_000_000
    layout_max_depth: int = 50
    liquid_max_loop_iterations: int = 1_000_000
    liquid_max_local_bytes: int = 50_000_000
    liquid_max_depth: int = 50
    max_file_bytes: int = 50_000_000
    max_page_bytes: int = 50_000_000
    max_yaml_size: int = 10_000_000
    markdown_max_elements: int = 1_000_000
    highlight_timeout: float = 10.0
    max_site_bytes: int = 1_000_000_000
    jobs: int = 0
    highlight_cache_bytes: int = 100_000_000


@dataclass(frozen=True)
class SmtpConfig:
    """``[notify.smtp]``: ``security`` is ``none``, ``starttls`` or ``ssl``; ``timeout`` in s."""

    host: str = "localhost"
    port: int = 25
    security: str = "none"
    username: str | None = None
    password_env: str | None = None
    timeout: float = 30.0


@dataclass(frozen=True)
class WebhookConfig:
    """``[notify.webhook]``: a JSON summary POSTed to a chat system's incoming webhook.

    Off while neither ``url`` nor ``url_env`` is set. ``url_env`` names an environment
    variable holding the URL (chat webhook URLs embed their secret); ``timeout`` in s.
    """

    url: str = ""
    url_env: str | None = None
    timeout: float = 10.0


@dataclass(frozen=True)
class NotifyConfig:
    """``[notify]``: how the commit email is delivered and what it says.

    ``transport`` is ``smtp``, ``sendmail``, ``mbox``, ``stdout`` or ``none``. ``sender`` is
    the TOML key ``from``. ``repository_url`` defaults to ``publish.url``; ``pusher`` to the
    publish author's name. The limits are git-multimail's (0 disables each):
    ``max_line_length`` (emailMaxLineLength, characters), ``max_lines`` (emailMaxLines, body
    lines), ``subject_max_length`` (subjectMaxLength, characters of the commit subject) and
    ``max_commit_emails`` (maxCommitEmails: above it only the summary email is sent).
    """

    transport: str = "none"
    to: tuple[str, ...] = ()
    sender: str = "deploybot@localhost"
    mbox: Path | None = None
    repository_url: str = ""
    pusher: str = ""
    max_line_length: int = 500
    max_lines: int = 10000
    subject_max_length: int = 500
    max_commit_emails: int = 50
    smtp: SmtpConfig = field(default_factory=SmtpConfig)
    webhook: WebhookConfig = field(default_factory=WebhookConfig)


@dataclass(frozen=True)
class StateConfig:
    """``[state]``: ``dir`` holds the mirrors, caches, outbox and lock."""

    dir: Path = Path(".deploybot")


@dataclass(frozen=True)
class DaemonConfig:
    """``[daemon]``: ``deploybot serve``. In the daemon's config (the first ``--config``):
    ``listen`` (``HOST:PORT``, port 0 = any free port, or ``unix:PATH``), ``secret_env``
    (the environment variable holding the webhook secret), ``poll_interval`` (s; 0 = off),
    ``max_body_bytes``, ``workers`` (sites built at once), ``stop_timeout`` (s a stop waits
    for running builds), ``read_timeout`` (s a client has for its headers, and again for its
    body) and ``sites`` (a glob of site configs, relative to the file). In a site's config
    only ``name`` (its ``/webhook/<name>``; default the file's stem) and ``secret_env`` (its
    own secret) count. See :mod:`deploybot.serve`.
    """

    listen: str = "127.0.0.1:8787"
    secret_env: str | None = None
    poll_interval: int = 300
    max_body_bytes: int = 25_000_000
    workers: int = 1
    stop_timeout: float = 300.0
    read_timeout: float = 10.0
    sites: str = ""
    name: str = ""


@dataclass(frozen=True)
class QueueConfig:
    """``[queue]``: where ``deploybot serve`` queues builds. ``backend`` ``"local"`` (its own
    in-process queue: nothing else to run) or ``"redis"``: ``url`` (``redis://``,
    ``rediss://`` or ``unix://``; the password, if any, in the variable ``password_env``),
    and ``deploybot worker`` processes run the builds (:mod:`deploybot.serve.fleet`). ``name``:
    the shared RQ queue (a site's config may name its own); ``affinity_timeout`` (s a
    build waits for the worker that built its site last), ``lease_ttl`` (s a dead
    worker's site lease lasts), ``job_timeout`` (s a build may run), ``heartbeat_timeout``
    (s after a worker's last heartbeat, sent every fifth of it, that it counts as down: its
    queue and the lease of its running build go to the others at once). In a site's config
    only ``name`` counts.
    """

    backend: str = "local"
    url: str = ""
    password_env: str | None = None
    name: str = "deploybot"
    affinity_timeout: float = 30.0
    lease_ttl: float = 60.0
    job_timeout: float = 3600.0
    heartbeat_timeout: float = 10.0


@dataclass(frozen=True)
class Config:
    """The whole configuration. ``path`` is the file it came from, resolved (None when built
    in code); ``base`` the folder its relative paths were resolved against
    (:func:`deploybot.git.locations.config_base`: a symlinked file's own folder, not its
    target's); ``raw_urls`` ``source.url`` and ``publish.url`` as the file wrote them
    (``publish.url`` defaulting to ``source.url``), which the no-op stamp resolves again
    (:mod:`deploybot.pipeline.noop`). None of these three is a TOML key."""

    source: SourceConfig
    publish: PublishConfig = field(default_factory=PublishConfig)
    render: RenderConfig = field(default_factory=RenderConfig)
    notify: NotifyConfig = field(default_factory=NotifyConfig)
    state: StateConfig = field(default_factory=StateConfig)
    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    path: Path | None = None
    queue: QueueConfig = field(default_factory=QueueConfig)
    base: Path | None = None
    raw_urls: tuple[str, str] | None = None
