from django.urls import path

from api.users import profile_views, views

app_name = "users-api"

urlpatterns = [
    path("users", views.UserListView.as_view(), name="user-list"),
    # A user id may hold "/" (ids are the application's): the export's route is tried first.
    path("users/<path:user_id>/export", views.UserExportView.as_view(), name="user-export"),
    path("users/<path:user_id>/profile", profile_views.UserProfileView.as_view(), name="user-profile"),
    path("profile", profile_views.AgentProfileView.as_view(), name="agent-profile"),
    path("users/<path:user_id>", views.UserDetailView.as_view(), name="user-detail"),
]
