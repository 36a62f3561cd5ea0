"""``make bench``: deploybot against Jekyll, Hugo and Pelican on the same posts (issue 12).

``python -m tests.bench`` (:mod:`tests.bench.__main__`) runs it: :mod:`site` makes the
sites, :mod:`peers` the peers' sources and the seed-style pipeline, :mod:`scenarios` the
rounds of measurements, :mod:`measure` runs each in its own process (wall and CPU time, the
peak memory of its process tree and its ru_maxrss), :mod:`report` writes the Markdown
tables and :mod:`plot` the PNG. An older benchmark lives here too: :mod:`render_limits`
(parse time of hostile posts). The commit email's is ``tests/bench_email.py``.
"""
