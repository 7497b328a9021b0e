"""The WSGI application that `make run`, docker-compose.yml and the Dockerfile serve with gunicorn (gunicorn.conf.py):
Django, and the MCP server at /mcp beside it (mcp_server.wsgi)."""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.production")
django_application = get_wsgi_application()

# isort: split
from core.embeddings.providers import embedding_provider_prepare_for_web  # noqa: E402  (needs Django set up)
from mcp_server.wsgi import ServiceApplication  # noqa: E402  (needs Django set up)

embedding_provider_prepare_for_web()

if settings.DEBUG:
    # What runserver did for `make run`: the admin's static files straight from the apps (production collects them).
    from django.contrib.staticfiles.handlers import StaticFilesHandler

    django_application = StaticFilesHandler(django_application)

application = ServiceApplication(django_application=django_application)
