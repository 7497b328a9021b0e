import pytest
from django.apps import apps
from django.contrib import admin
from django.urls import reverse

from core.models import EmbeddingRecord

PROJECT_APPS = {"core", "agents", "webhooks", "conversations", "formation", "facts", "reflections"}


def _project_models():
    return [
        model for model in apps.get_models() if model._meta.app_label in PROJECT_APPS and not model._meta.auto_created
    ]


def test_every_model_is_registered_in_the_admin():
    unregistered = [model.__name__ for model in _project_models() if model not in admin.site._registry]
    embedding_tables = {model.__name__ for model in _project_models() if issubclass(model, EmbeddingRecord)}

    # Embedding rows are shown on their fact, message or chunk, never edited alone.
    assert set(unregistered) <= embedding_tables
    assert {"FactEmbedding", "MessageEmbedding"} <= embedding_tables


@pytest.mark.django_db
def test_every_admin_list_page_renders_for_staff(admin_client, session):
    for model in _project_models():
        if model not in admin.site._registry:
            continue
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        assert admin_client.get(url).status_code == 200, url
