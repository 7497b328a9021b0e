"""The embedded stack behind `make run` and `make test` (`python -m devstack run|test`): PostgreSQL + pgvector and a
Redis-compatible server from wheels, the local LLM server, the web server and Celery processes, each started and
stopped here. Not part of the service: nothing in the product imports it.

- processes.py: ports, waiting, `manage.py`, the group of child processes a run starts and stops
- postgres.py: the embedded PostgreSQL server and its hot standby
- redis.py: the embedded Redis-compatible server
- services.py: both servers, or what DATABASE_URL / REDIS_URL point at instead
- local_llm.py: the llama.cpp server of LLM_PROVIDER=local and the shipped model
- workers.py: the Celery workers of a deployment
- run.py: `make run`; test.py: `make test`; __main__.py: the command line
"""
