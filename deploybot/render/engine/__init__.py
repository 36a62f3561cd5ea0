"""The build: one page's render (:mod:`.document`), the full build's functions (:mod:`.build`),
the :class:`~deploybot.render.engine.full.Engine` that records what each output read
(:mod:`.deps`) into the build cache (:mod:`.cache`) and builds in full (:mod:`.full`),
incrementally (:mod:`.incremental`) or in worker processes (:mod:`.parallel`).
"""
