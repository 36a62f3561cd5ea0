"""The ``deploybot`` command line: click commands only.

:mod:`.entry` is the console script (a no-op ``run-once`` answered before click is imported);
:mod:`.commands` declares every command and maps errors to exit codes; :mod:`.report` is what
they print; :mod:`.stdio` ends a command whose reader went away; :mod:`.demo` is ``make demo``.
Nothing imports this package.

Light on purpose (this file imports nothing): :mod:`.entry` goes through it.
"""
