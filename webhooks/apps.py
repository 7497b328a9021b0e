from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    verbose_name = "Webhooks: endpoints, the outbox of events, deliveries"

    def ready(self) -> None:
        # Imported in ready(), Django's place for it: the receivers need the models loaded.
        from webhooks import signals  # noqa: F401  (connects the receivers)
