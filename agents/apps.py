from django.apps import AppConfig

# Models that moved here from other apps with their tables (issue 22): their old admin URLs redirect here.
MOVED_HERE_FROM = {
    "agent": "conversations",
    "agentapikey": "conversations",
    "enduser": "conversations",
    "erasurerecord": "core",
}


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = "Agents: tenants, API keys, end users"

    def ready(self) -> None:
        # Imported in ready(), Django's place for it: registries are filled once every app is loaded.
        from agents import signals  # noqa: F401  (connects the receivers)
        from core.admin.redirects import admin_moved_model_register

        for model_name, old_app_label in MOVED_HERE_FROM.items():
            admin_moved_model_register(old_app_label=old_app_label, new_app_label=self.label, model_name=model_name)
