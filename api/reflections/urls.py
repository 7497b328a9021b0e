from django.urls import path

from api.reflections.views import MemoryBundleView, MemoryContextView

app_name = "memory-api"

urlpatterns = [
    path("memory/context", MemoryContextView.as_view(), name="memory-context"),
    path("memory/bundle", MemoryBundleView.as_view(), name="memory-bundle"),
]
