"""What a build writes besides its pages, and where it writes: the feeds (:mod:`.feeds`), the
sitemap (:mod:`.sitemap`), the output sinks and the build report (:mod:`.sinks`).
"""
