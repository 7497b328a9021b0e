from django.apps import AppConfig


class ReflectionsConfig(AppConfig):
    name = "reflections"
    verbose_name = "Reflections and consolidated memory"
