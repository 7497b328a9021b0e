from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents: tenants, API keys, end users"

    def ready(self) -> None:
        # Imported in ready(), Django's place for it: the receivers need the models loaded.
        from agents import signals  # noqa: F401  (connects the receivers)
