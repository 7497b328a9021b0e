from django.apps import AppConfig


class PortabilityConfig(AppConfig):
    name = "portability"
    verbose_name = "Portability: import, export, re-embedding"
