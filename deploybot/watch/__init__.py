"""The watch stage: fetch the source branch into a local bare mirror and snapshot its tip
(:class:`~deploybot.watch.fetch.SourceSnapshot`: the source commit, its tree, the paths changed
since the last build).
"""
