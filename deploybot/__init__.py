"""deploybot: a git-driven deploy bot for Jekyll-style static sites.

The pipeline has four stages, each a module that can be read alone:
``watch`` (fetch the source), ``render`` (build the site from git objects),
``publish`` (write the build commit onto the publish branch and push it) and
``notify`` (the commit email). Only :mod:`deploybot.pipeline.run` joins them.
"""

__version__ = "0.1.0"
