"""Jekyll plugins, one file each: jekyll-paginate (:mod:`.paginate`) and jekyll-toc
(:mod:`.jekyll_toc`).
"""
