"""Code highlighting: Pygments in the HTML Jekyll's Rouge writes (:mod:`.highlighter`), the
cache of highlighted blocks across builds (:mod:`.cache`) and the time one page may spend
highlighting (:mod:`.clock`).
"""
