"""The ASGI application that `make run` (uvicorn) and docker-compose.yml's web service serve: Django, with the MCP
server at /mcp beside it (mcp_server.asgi). docs/architecture.md says why one process serves both, with the figures."""

import os

from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.production")
django_application = get_asgi_application()

from core.embeddings.providers import embedding_provider_prepare_for_web  # noqa: E402  (needs Django set up)
from mcp_server.asgi import service_asgi_application  # noqa: E402  (needs Django set up)

embedding_provider_prepare_for_web()
if settings.DEBUG:
    # What runserver did for `make run`: the admin's static files straight from the apps (production collects them).
    django_application = ASGIStaticFilesHandler(django_application)
application = service_asgi_application(django_application=django_application)
