"""git's ``log``, ``diff`` and ``diff --stat``, byte for byte, from dulwich objects: a library in
its own right. :mod:`.commit_log` is ``git log -C --stat -p --cc -1 <commit>`` (or git itself,
:mod:`.git_cli`, when it is installed); :mod:`.diff` and its ``diff_*`` modules are xdiff's line
diff, :mod:`.diff_renames` and :mod:`.spanhash` rename and copy detection, :mod:`.diffstat` the
stat block, :mod:`.merge` and :mod:`.combined` a merge's combined diff; :mod:`.summary` reads the
new commits and the tree diff; :mod:`.excerpt` is the part of the log text an email shows
(git-multimail's line limits); :mod:`.damage` names an object that cannot be read.
"""
