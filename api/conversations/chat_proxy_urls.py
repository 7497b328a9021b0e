"""The OpenAI-compatible surface, mounted at /v1/ so OpenAI SDKs work with base_url=<service>/v1."""

from django.urls import path

from api.conversations.chat_proxy_views import ChatCompletionsView

app_name = "openai-compatible"

urlpatterns = [
    path("chat/completions", ChatCompletionsView.as_view(), name="chat-completions"),
]
