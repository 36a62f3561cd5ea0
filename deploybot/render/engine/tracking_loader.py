"""The Jinja2 loader that records each template a build reads (:mod:`.deps`), in its own
module so that a build which never makes its Jinja2 environment (a site with Liquid layouts)
never imports Jinja2 (:mod:`deploybot.render.theme.deferred`)."""

from __future__ import annotations

from collections.abc import Callable

import jinja2

from deploybot.render.engine.deps import Kind, Recorder, fingerprint


class TrackingLoader(jinja2.BaseLoader):
    """Wraps a Jinja2 loader; every template lookup records ``t:NAME`` -> source fingerprint.

    Jinja2 calls the ``uptodate`` callable on each cache hit (``auto_reload``, the default),
    so reuse of a cached layout is recorded too. A missing template records ``''``.
    """

    def __init__(self, inner: jinja2.BaseLoader, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool] | None]:
        """Return the inner loader's ``(source, filename, uptodate)``, recording the read.

        Raises ``jinja2.TemplateNotFound`` as the inner loader does.
        """
        key = Kind.TEMPLATE + template
        try:
            source, filename, _ = self.inner.get_source(environment, template)
        except jinja2.TemplateNotFound:
            self.recorder.add(key, "")
            raise
        fp = fingerprint(source)
        self.recorder.add(key, fp)

        def uptodate() -> bool:
            self.recorder.add(key, fp)
            return True

        return source, filename, uptodate

    def list_templates(self) -> list[str]:
        """Return the inner loader's template names."""
        return self.inner.list_templates()
