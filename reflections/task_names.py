"""The names of the reflections app's Celery tasks (reflections/tasks.py), for code that queues them without
importing the tasks module, which imports the services that queue them."""

CONSOLIDATE_SCOPE = "reflections.consolidate_scope"
