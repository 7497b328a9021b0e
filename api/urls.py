"""Every REST endpoint under /api/v1/ (the MCP endpoint's route is the MCP server's)."""

from django.urls import include, path

urlpatterns = [
    path("", include("api.conversations.urls")),
    path("", include("api.reflections.urls")),
    path("", include("api.facts.urls")),
    path("", include("api.facts.document_urls")),
    path("", include("api.reflections.curation_urls")),
    path("", include("api.tools.urls")),
    path("", include("api.users.urls")),
    path("admin/", include("api.administration.urls")),
]
