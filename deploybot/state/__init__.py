"""The state folder (``state.dir``): what a run keeps between runs, and holding it.

:mod:`.statedir` says where each part lives (the lock, the source and publish mirrors, the
render cache, the outbox, the notify records) and what holding the folder means (made
private, locked, a full disk told as such); :mod:`.stale` sweeps what a killed run left;
:mod:`.housekeeping` keeps the git mirrors small; :mod:`.checkpoint` names the moments when
what a run wrote must be safe elsewhere (the fleet hooks in there); :mod:`.private` creates
deploybot's files in it with their mode (0600).
"""
