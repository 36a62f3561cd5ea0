"""What every layer may use and that knows no stage: the error hierarchy and its exit codes
(:mod:`.errors`), keeping secrets out of what is printed (:mod:`.redact`), log lines
(:mod:`.logs`, :mod:`.journal`), a progress bar (:mod:`.progress`), a deadline for a whole
network exchange (:mod:`.deadline`) and a child process that dies with its parent
(:mod:`.parent_death`).

It imports nothing of deploybot outside this folder.
"""
