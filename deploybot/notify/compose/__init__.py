"""Composing the emails, pure (no git, no I/O): git-multimail's combined email (:mod:`.email`),
its summary and ``NN/TT`` series (:mod:`.series`), what the emails of one announcement share
(:mod:`.envelope`, :mod:`.names`), the source section (:mod:`.sources`) and the size-limited
body (:mod:`.body`).
"""
