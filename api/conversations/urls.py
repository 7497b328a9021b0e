from django.urls import path

from api.conversations import search_views, views

app_name = "conversations-api"

urlpatterns = [
    path("sessions", views.SessionCreateView.as_view(), name="session-create"),
    path("sessions/<str:session_id>", views.SessionDetailView.as_view(), name="session-detail"),
    path("sessions/<str:session_id>/messages", views.SessionMessagesView.as_view(), name="session-messages"),
    path("sessions/<str:session_id>/close", views.SessionCloseView.as_view(), name="session-close"),
    path("sessions/<str:session_id>/form", views.SessionFormView.as_view(), name="session-form"),
    path("messages/search", search_views.MessageSearchView.as_view(), name="message-search"),
]
