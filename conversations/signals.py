"""What conversations tells the apps above it, without importing them: the formation pipeline (formation/) listens,
connected in its AppConfig.ready(). Both are sent inside the writing transaction, so that a receiver's writes (a
session marked queued, a task enqueued on commit) commit or roll back with the messages."""

from django.dispatch import Signal

# Messages were appended to `session` (its counters already updated). Sent once per append that stored any.
messages_appended = Signal()
# `session` was closed by this call (not sent when it already was).
session_closed = Signal()
