from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from console.redirects import admin_moved_model_urls
from core.observability.http import metrics_view
from core.views import health_view

urlpatterns = [
    # Before the admin: its catch-all would answer 404 for the admin URLs of models that moved to another app.
    path("admin/", include(admin_moved_model_urls())),
    path("admin/", admin.site.urls),
    path("health/", health_view, name="health"),
    path("metrics", metrics_view, name="metrics"),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/v1/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/v1/", include("api.urls")),
    path("api/v1/", include("mcp_server.urls")),
    path("v1/", include("api.conversations.chat_proxy_urls")),
]

handler404 = "core.api.errors.not_found_handler"
handler500 = "core.api.errors.server_error_handler"
