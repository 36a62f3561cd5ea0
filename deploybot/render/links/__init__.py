"""Internal links and assets of a build: their extraction, resolution and check (broken links)."""
