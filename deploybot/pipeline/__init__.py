"""Where the stages meet, and nowhere else: watch -> render -> publish -> notify.

:mod:`.run` is ``run_once(config) -> RunResult`` (and the healing of a run a kill cut
short); :mod:`.noop` answers a run with nothing to do before anything heavy is imported;
:mod:`.mail` is the notify stage alone (``deploybot outbox``, ``deploybot notify``);
:mod:`.build_folder` is the render stage alone (``deploybot build SOURCE OUT``).

Light on purpose (this file imports nothing): :mod:`.noop` is imported before click.
"""
