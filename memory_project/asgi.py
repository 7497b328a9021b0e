"""The ASGI application that `make run` and docker-compose.yml's web service serve (uvicorn): the MCP server at /mcp
(mcp_server.asgi) beside Django, which serves everything else as the WSGI application it is, on a pool of
WEB_THREADS long-lived threads (a2wsgi). Django's own ASGI handler runs each request on a new thread, so that every
request opened a new database connection: 15 to 20 ms more per search, measured (docs/architecture.md)."""

import os

from a2wsgi import WSGIMiddleware
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.production")

from memory_project.wsgi import application as wsgi_application  # noqa: E402  (sets Django up and warms the model)

# isort: split
from mcp_server.asgi import service_asgi_application  # noqa: E402  (needs Django set up)

if settings.DEBUG:
    # What runserver did for `make run`: the admin's static files straight from the apps (production collects them).
    from django.contrib.staticfiles.handlers import StaticFilesHandler

    wsgi_application = StaticFilesHandler(wsgi_application)

application = service_asgi_application(
    django_application=WSGIMiddleware(wsgi_application, workers=settings.WEB_THREADS)
)
