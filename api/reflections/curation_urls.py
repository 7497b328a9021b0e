from django.urls import path

from api.reflections import curation_views

app_name = "reflections-curation-api"

urlpatterns = [
    path("reflections", curation_views.ReflectionListView.as_view(), name="reflection-list"),
    path("reflections/<int:reflection_id>", curation_views.ReflectionDetailView.as_view(), name="reflection-detail"),
    path("blobs", curation_views.ConsolidatedMemoryListView.as_view(), name="blob-list"),
    path("blobs/<int:memory_id>", curation_views.ConsolidatedMemoryDetailView.as_view(), name="blob-detail"),
]
