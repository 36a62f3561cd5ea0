"""Delivering what was composed: the outbox (:mod:`.outbox`: on disk before it is sent), the
transports (:mod:`.transport`: SMTP in :mod:`.smtp` and :mod:`.seven_bit`, sendmail, an mbox in
:mod:`.mbox`, stdout) and the chat webhook (:mod:`.webhook`, :mod:`.webhook_http`).
"""
