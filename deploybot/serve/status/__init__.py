"""The daemon's status page for people: ``GET /``, ``/sites/<name>``, ``/sites/<name>/builds/<id>``.

- :mod:`.access`: whether the page is open, behind a token, or off (by the listen address);
- :mod:`.view`: what a site's page shows, read from what lasts (the build journal, the
  publish mirror's notes, the outbox) and from the queue;
- :mod:`.pages`: the aiohttp handlers and the Jinja2 templates (``templates/``, ``style.css``).
"""
