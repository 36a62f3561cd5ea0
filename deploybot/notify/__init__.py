"""The notify stage: the emails (and webhook) for a build commit, the outbox, delivery.

What the pipeline calls (:mod:`.stage`)::

    update = RefUpdate(repo, "refs/heads/asf-site", old, new)   # announce.RefUpdate
    report = stage.announce(update, config.notify,
                            state_dir=config.state.dir, now=now)   # queue, record, deliver
    report = stage.deliver_all(config.notify, config.state.dir / "outbox")   # retries only

:func:`deploybot.notify.stage.announce` decides between the combined email and a summary + ``NN/TT``
series (:mod:`.announce`), queues the webhook entry (:mod:`deploybot.notify.deliver.webhook`) and
delivers both channels. With ``notify.transport = "none"`` no email is queued (the record still
moves on). Composition is pure (:mod:`deploybot.notify.compose.email`,
:mod:`deploybot.notify.compose.series`); git reads live in :mod:`deploybot.notify.gitlog.commit_log`
and :mod:`deploybot.notify.gitlog.summary`; transports in :mod:`deploybot.notify.deliver.transport`;
the outbox in :mod:`deploybot.notify.deliver.outbox`; one build commit's email, read from a
repository, in :mod:`.commit_email`. This file imports nothing: importing one module of the stage
loads only what that module needs.
"""
