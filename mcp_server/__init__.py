"""The memory service as a Model Context Protocol server: the memory tools and the context resource, over Streamable
HTTP at /mcp (memory_project.asgi mounts it beside Django) and, through the REST twins of the registry (api.py), over
stdio from the client package's `agent-memory-mcp`.

A part of the API layer: it uses conversations, facts and reflections, and nothing imports it but the wiring
(memory_project.urls, memory_project.asgi). Named `mcp_server`, not `mcp`, which would shadow the SDK."""
