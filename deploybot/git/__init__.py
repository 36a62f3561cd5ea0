"""git plumbing on dulwich, shared by the watch, publish and notify stages.

Everything works on bare repositories, with no work tree and no index. A remote is a
:class:`~deploybot.git.remote.Remote` (where, how to log in, the bounds of one exchange);
:mod:`.locations` says where a location points. :mod:`.repository` opens bare repositories
and writes objects and refs, fetches and pushes; :mod:`.bounds` and :mod:`.failure` bound an
exchange and say what a failed one means; :mod:`.tree`, :mod:`.tree_check` and
:mod:`.tree_edit` read, check and edit trees; :mod:`.object_size` and :mod:`.rev_parse` are
git's ``cat-file -s`` and ``rev-parse``; :mod:`.path_rules` is git's ``verify_path`` and the
names deploybot refuses.

It imports nothing of the stages, the config or the state folder.
"""
