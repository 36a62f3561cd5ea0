"""Compiled layouts kept across builds: a Jinja2 bytecode cache in memory.

Every build makes its own :class:`~.sandbox.LayoutSandbox` (its filters close over the
site's ``url`` and timezone, its budget is the build's), and Jinja2 compiles each template
anew per environment: lexing, parsing and generating Python for the sandbox, then
``compile()``. That was about half of a small build's time. The generated code depends only
on the template's text and on how :func:`~.layouts.make_environment` configures every
environment (the sandbox's code generator, autoescaping by name, trailing newlines), none
of it the build's: so the code object of a template is reused whenever a template of the
same name has the same text (Jinja2 checks the source's SHA-1 before taking it).

Only :func:`~.layouts.make_environment`'s environments use :data:`COMPILED`; an environment
configured otherwise would need a cache of its own. Bounded: the least recently used code
goes past :data:`MAX_TEMPLATES`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from types import CodeType

from jinja2.bccache import Bucket, BytecodeCache

MAX_TEMPLATES = 1024
"""Code objects kept, per process (a theme has tens of templates; a fleet process serves
many sites)."""


class MemoryBytecodeCache(BytecodeCache):
    """A :class:`jinja2.BytecodeCache` holding code objects in this process, keyed by
    Jinja2's bucket key (the template's name and file name) and checked against the SHA-1 of
    the source; at most ``limit`` of them, least recently used first out."""

    def __init__(self, limit: int = MAX_TEMPLATES) -> None:
        self.limit = limit
        self._code: OrderedDict[str, tuple[str, CodeType]] = OrderedDict()
        self._lock = threading.Lock()

    def load_bytecode(self, bucket: Bucket) -> None:
        """Give ``bucket`` the code compiled before from the same source, if any."""
        with self._lock:
            kept = self._code.get(bucket.key)
            if kept is None or kept[0] != bucket.checksum:
                return
            self._code.move_to_end(bucket.key)
        bucket.code = kept[1]

    def dump_bytecode(self, bucket: Bucket) -> None:
        """Keep ``bucket``'s freshly compiled code."""
        if bucket.code is None:
            return
        with self._lock:
            self._code[bucket.key] = (bucket.checksum, bucket.code)
            self._code.move_to_end(bucket.key)
            while len(self._code) > self.limit:
                self._code.popitem(last=False)

    def clear(self) -> None:
        """Forget every code object."""
        with self._lock:
            self._code.clear()

    def __len__(self) -> int:
        return len(self._code)


COMPILED = MemoryBytecodeCache()
"""The compiled layouts of :func:`~.layouts.make_environment`'s environments."""
