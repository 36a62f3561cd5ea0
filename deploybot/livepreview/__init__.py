"""``deploybot preview [SOURCE]``: a Jekyll site's working tree served with live reload.

As ``jekyll serve --livereload`` does: the site is built into a temporary folder, served on
this machine, rebuilt incrementally on each save, and the open pages reload. The parts,
each readable alone:

- :mod:`.paths`: which file a request path names (Jekyll's servlet), confined to the folder;
- :mod:`.inject`: the live-reload script, put into served HTML only;
- :mod:`.livereload`: the Server-Sent Events stream the script listens to;
- :mod:`.server`: the HTTP answers (aiohttp);
- :mod:`.watch`: the saves (watchfiles), in bursts, without editors' and tools' files;
- :mod:`.builder`: the builds (the pipeline's incremental engine), the last good one kept;
- :mod:`.session`: all of it, until Ctrl-C (:func:`deploybot.livepreview.session.run_preview`).
"""
