"""The names of the conversations app's Celery tasks (conversations/tasks.py), for code that queues them without
importing the tasks module, which imports the services that queue them."""

EMBED_MESSAGES = "conversations.embed_messages"
