"""Jekyll plugins, one file each, found by :mod:`.registry`: jekyll-paginate
(:mod:`.paginate`), jekyll-toc (:mod:`.jekyll_toc`), jemoji (:mod:`.jemoji`) and the
``jekyll-*`` gems (``jekyll_NAME``).
"""
