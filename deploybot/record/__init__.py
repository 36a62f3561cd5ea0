"""The build record: the git note (``refs/notes/deploybot``) each build commit carries, saying
which source commit its tree was built from and why it was built. Written by the publish stage,
read by the notify stage and ``deploybot log``; :mod:`.note` is its format, :mod:`.reasons`
its words. Below the stages, above :mod:`deploybot.git`; this file imports nothing.
"""
