"""The memory service as a Model Context Protocol server: the memory tools and the context resource, over Streamable
HTTP at /mcp (mcp_server.wsgi serves it beside Django, in gunicorn's processes) and, through the REST twins of the
registry (api.py), over stdio from the client package's `agent-memory-mcp`.

A part of the API layer: it uses conversations, facts and reflections, and nothing imports it but the wiring
(memory_project.urls, memory_project.wsgi). Named `mcp_server`, not `mcp`, which would shadow the SDK."""
