from django.urls import path

from api.facts import entity_views, timeline_views, views

app_name = "facts-api"

urlpatterns = [
    path("facts", views.FactListView.as_view(), name="fact-list"),
    path("facts/<int:fact_id>", views.FactDetailView.as_view(), name="fact-detail"),
    path("facts/<int:fact_id>/history", views.FactHistoryView.as_view(), name="fact-history"),
    path("facts/<int:fact_id>/feedback", views.FactFeedbackView.as_view(), name="fact-feedback"),
    path("entities", entity_views.EntityListView.as_view(), name="entity-list"),
    path("entities/<int:entity_id>", entity_views.EntityDetailView.as_view(), name="entity-detail"),
    path("entities/<int:entity_id>/timeline", timeline_views.EntityTimelineView.as_view(), name="entity-timeline"),
    # A user id may hold "/" (the users API's routes take it too, and are tried after this one).
    path("users/<path:user_id>/timeline", timeline_views.UserTimelineView.as_view(), name="user-timeline"),
    path("memory/search", views.MemorySearchView.as_view(), name="memory-search"),
]
