from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "Conversations: agents, users, sessions, messages"

    def ready(self) -> None:
        from conversations.selectors.formation_backlog import formation_health
        from conversations.selectors.memory_review import review_queue_health
        from core.health import health_check_register
        from core.llm.client import llm_provider_recovered

        llm_provider_recovered.connect(_formation_resume_soon, dispatch_uid="formation_resume_on_provider_recovery")
        health_check_register("formation", formation_health)
        health_check_register("memory_review", review_queue_health)


def _formation_resume_soon(**_) -> None:
    """The circuit breaker closed: the sessions that waited for the provider go now, not at the next beat."""
    from conversations.services.formation_holds import formation_resume_soon

    formation_resume_soon()
