"""Memory as LLM tools: search_memory, get_entity, save_memory, update_memory and delete_memory, run for one
conversation through the same selectors and services as the API, under the same trust rules as formation.

One module per tool holds all of it: its description, its arguments (the serializer that validates them, beside the
JSON Schema the model is shown), and what it does. base.py has what every tool shares, guards.py what a tool may store
or change, registry.py the list of tools, their OpenAI-format definitions and the execution of one call. The REST API
(api/tools/) and the MCP server (mcp_server/tools.py) serve these same tools.

A tool call never raises for what the model got wrong (bad arguments, an unknown id, a closed fact): it returns
ToolResult(ok=False, error=...) with a message saying what to fix, which goes back to the model as the tool's output."""
