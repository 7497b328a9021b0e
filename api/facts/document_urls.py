from django.urls import path

from api.facts import document_views

app_name = "documents-api"

urlpatterns = [
    path("documents", document_views.DocumentListView.as_view(), name="document-list"),
    path("documents/<int:document_id>", document_views.DocumentDetailView.as_view(), name="document-detail"),
]
