from django.apps import AppConfig


class ReflectionsConfig(AppConfig):
    name = "reflections"
    verbose_name = "Reflections and consolidated memory"

    def ready(self) -> None:
        # Imported in ready(), Django's place for it. Every write of a reflection or blob, whoever makes it,
        # invalidates the cached always-in-context blocks; and the LLM usage figures learn which consolidations are
        # session summaries.
        from core.selectors.llm_usage import llm_job_steps_register
        from reflections import signals  # noqa: F401
        from reflections.selectors.consolidation_due import session_summary_jobs

        llm_job_steps_register("consolidation", session_summary_jobs)
