import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.production")
application = get_wsgi_application()

from core.embeddings.providers import embedding_provider_prepare_for_web  # noqa: E402  (needs Django set up)

embedding_provider_prepare_for_web()
