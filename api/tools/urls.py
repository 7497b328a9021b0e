from django.urls import path

from api.tools import views

urlpatterns = [
    path("tools", views.ToolListView.as_view(), name="tool-list"),
    path("tools/call", views.ToolCallView.as_view(), name="tool-call"),
]
