from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    verbose_name = "Conversations: agents, users, sessions, messages"

    def ready(self) -> None:
        # Imported in ready(), Django's place for it: these modules import models, loadable only once apps are.
        from conversations.selectors.formation_backlog import formation_health
        from conversations.selectors.memory_review import review_queue_health
        from conversations.selectors.operations_metrics import formation_metrics, review_queue_metrics
        from conversations.services.formation_holds import formation_resume_on_provider_recovery
        from core.health import health_check_register
        from core.llm.client import llm_provider_recovered
        from core.observability.metrics import metrics_collector_register

        llm_provider_recovered.connect(
            formation_resume_on_provider_recovery, dispatch_uid="formation_resume_on_provider_recovery"
        )
        health_check_register("formation", formation_health)
        health_check_register("memory_review", review_queue_health)
        metrics_collector_register("formation", formation_metrics)
        metrics_collector_register("review_queue", review_queue_metrics)
