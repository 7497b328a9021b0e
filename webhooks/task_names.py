"""The names of the webhooks app's Celery tasks (webhooks/tasks.py), for code that queues them without importing the
tasks module, which imports the services that queue them."""

DELIVER = "webhooks.deliver"
DISPATCH = "webhooks.dispatch_events"  # no arguments: the events not dispatched yet
