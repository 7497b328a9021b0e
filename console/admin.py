"""What Django's admin autodiscovery imports: every page of the console registers itself with admin.site."""

from console import agents, conversations, core, facts, formation, reflections, webhooks

__all__ = ["agents", "conversations", "core", "facts", "formation", "reflections", "webhooks"]
