"""The names of the facts app's Celery tasks (facts/tasks.py), for code that queues them without importing the tasks
module, which imports the services that queue them."""

REEMBED = "facts.reembed"
EMBED_MISSING = "facts.embed_missing"
EMBED_REFERENCE_CHUNKS = "facts.embed_reference_chunks"
GRAPH_EXTRACT = "facts.graph_extract"
