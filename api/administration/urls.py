from django.urls import path

from api.administration import views

app_name = "administration-api"

urlpatterns = [
    path("agents", views.AgentListView.as_view(), name="agent-list"),
    path("agents/<str:agent_id>", views.AgentDetailView.as_view(), name="agent-detail"),
    path("agents/<str:agent_id>/keys", views.APIKeyListView.as_view(), name="key-list"),
    path("agents/<str:agent_id>/keys/<int:key_id>", views.APIKeyDetailView.as_view(), name="key-detail"),
    path("agents/<str:agent_id>/webhooks", views.WebhookListView.as_view(), name="webhook-list"),
    path("agents/<str:agent_id>/webhooks/<int:webhook_id>", views.WebhookDetailView.as_view(), name="webhook-detail"),
    path(
        "agents/<str:agent_id>/webhooks/<int:webhook_id>/deliveries",
        views.WebhookDeliveryListView.as_view(),
        name="webhook-delivery-list",
    ),
]
