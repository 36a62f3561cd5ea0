"""Reading the source as Jekyll 4.3 reads it: the tree of blobs (:mod:`.source`), ``_config.yml``
(:mod:`.siteconfig`), which files are what (:mod:`.entries`), front matter (:mod:`.frontmatter`,
:mod:`.yamlload`), dates (:mod:`.dates`, :mod:`.rubytime`), collections, front matter
defaults, ``site.data``, permalinks and slugs, symlinks; :mod:`.site` joins them into the
:class:`~deploybot.render.model.SiteModel`. Nothing here renders.
"""
