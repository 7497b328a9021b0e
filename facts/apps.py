from django.apps import AppConfig


class FactsConfig(AppConfig):
    name = "facts"
    verbose_name = "Facts"

    def ready(self) -> None:
        # Imported in ready(): the collector reads models, loadable only once apps are.
        from core.observability.metrics import metrics_collector_register
        from facts.selectors.embedding_backlog import embedding_backlog_metrics

        metrics_collector_register("embedding_backlog", embedding_backlog_metrics)
