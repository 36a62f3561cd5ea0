"""Delivering what was composed: the outbox (:mod:`.outbox`: on disk before it is sent), the
transports (:mod:`.transport`: SMTP in :mod:`.smtp` and :mod:`.seven_bit`, sendmail, an mbox in
:mod:`.mbox`, stdout), the chat webhook (:mod:`.webhook`, :mod:`.webhook_http`) and the forge's
commit statuses (:mod:`.forge_status`; the forges: :mod:`deploybot.config.forges`).
"""
