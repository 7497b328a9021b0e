from django.apps import AppConfig


class FormationConfig(AppConfig):
    name = "formation"
    verbose_name = "Formation: jobs, retention, the review queue"

    def ready(self) -> None:
        # Imported in ready(), Django's place for it: these modules import models, loadable only once apps are.
        from core.llm.client import llm_provider_recovered
        from core.observability.metrics import metrics_collector_register
        from core.runtime.health import health_check_register
        from formation.selectors.formation_backlog import formation_health
        from formation.selectors.memory_review import review_queue_health
        from formation.selectors.operations_metrics import formation_metrics, review_queue_metrics
        from formation.services.formation_holds import formation_resume_on_provider_recovery

        llm_provider_recovered.connect(
            formation_resume_on_provider_recovery, dispatch_uid="formation_resume_on_provider_recovery"
        )
        health_check_register("formation", formation_health)
        health_check_register("memory_review", review_queue_health)
        metrics_collector_register("formation", formation_metrics)
        metrics_collector_register("review_queue", review_queue_metrics)
