"""Composing the emails, pure (no git, no I/O): git-multimail's combined email (:mod:`.email`),
its summary and ``NN/TT`` series (:mod:`.series`), what the emails of one announcement share
(:mod:`.envelope`, :mod:`.names`) and the source section (:mod:`.sources`). The size-limited
body, the part of the ``git log`` text an email shows, is the log library's
(:mod:`deploybot.notify.gitlog.excerpt`).
"""
