"""The names of the conversations app's Celery tasks (conversations/tasks.py), for code that queues them without
importing the tasks module, which imports the services that queue them."""

FORM_SESSION_MEMORIES = "conversations.form_session_memories"
RESUME_FORMATION = "conversations.resume_formation"
SWEEP_FORMATION = "conversations.sweep_formation"
EMBED_MESSAGES = "conversations.embed_messages"
ENFORCE_RETENTION = "conversations.enforce_retention"
