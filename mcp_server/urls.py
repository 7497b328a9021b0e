from django.urls import path

from mcp_server import api

app_name = "mcp-api"

urlpatterns = [
    path("mcp/tools", api.MCPToolListView.as_view(), name="mcp-tool-list"),
    path("mcp/tools/call", api.MCPToolCallView.as_view(), name="mcp-tool-call"),
]
