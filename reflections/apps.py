from django.apps import AppConfig


class ReflectionsConfig(AppConfig):
    name = "reflections"
    verbose_name = "Reflections and consolidated memory"

    def ready(self) -> None:
        # Imported in ready(), Django's place for it: every write of a reflection or blob, whoever makes it,
        # invalidates the cached always-in-context blocks.
        from reflections import signals  # noqa: F401  (connects the receivers)
