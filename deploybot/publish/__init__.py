"""The publish stage: the output tree -> one ``Build at ...`` commit on the publish branch -> push;
never backwards.

:mod:`.commit` writes the build commit over the branch's tip, with its record (a git note,
whose format is :mod:`deploybot.record`'s) and pushes it; :mod:`.history` reads the records
back (``deploybot log``), in :mod:`deploybot.record.reasons`' words.
"""
