"""What a build writes besides its pages, and where it writes: the bundled theme's feeds
(:mod:`.feeds`), the output sinks and the build report (:mod:`.sinks`).
"""
