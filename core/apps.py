from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core: providers, embedding spaces, jobs"

    def ready(self) -> None:
        # Before Django builds its middleware chain and before any database connection: the instrumentations hook both.
        from core.observability.tracing import tracing_configure

        tracing_configure()
