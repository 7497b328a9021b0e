from django.apps import AppConfig


class FactsConfig(AppConfig):
    name = "facts"
    verbose_name = "Facts"

    def ready(self) -> None:
        # Imported in ready(): the collector and the ranking read models, loadable only once apps are.
        from conversations.selectors.related_turns import messages_graph_ranking_register
        from core.observability.metrics import metrics_collector_register
        from facts.selectors.embedding_backlog import embedding_backlog_metrics
        from facts.selectors.graph_search import messages_graph_ranking

        metrics_collector_register("embedding_backlog", embedding_backlog_metrics)
        messages_graph_ranking_register(messages_graph_ranking)
