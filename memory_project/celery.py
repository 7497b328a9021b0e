"""The Celery app. Configuration comes from Django settings (CELERY_*); the beat schedule is defined here in code
and django-celery-beat's DatabaseScheduler registers it idempotently at beat start-up (entries are matched by name),
so operators see and can pause the jobs in the admin."""

import os

from celery import Celery
from celery.schedules import crontab

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.local")

app = Celery("memory_project")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

from celery.signals import celeryd_after_setup, task_prerun  # noqa: E402

from core.observability.worker import celery_observability_connect  # noqa: E402
from core.runtime.worker_heartbeat import WorkerHeartbeatStep  # noqa: E402
from core.runtime.worker_threads import worker_embedding_threads_limit, worker_processes_record  # noqa: E402
from webhooks.listener import WebhookEventListenerStep  # noqa: E402

app.steps["worker"].add(WorkerHeartbeatStep)
app.steps["worker"].add(WebhookEventListenerStep)
celeryd_after_setup.connect(worker_processes_record, weak=False, dispatch_uid="worker_processes_record")
task_prerun.connect(worker_embedding_threads_limit, weak=False, dispatch_uid="worker_embedding_threads_limit")
celery_observability_connect()

app.conf.beat_schedule = {
    "formation-sweep": {"task": "formation.sweep_formation", "schedule": 60.0},
    # Sessions waiting for a budget or for the LLM provider go again once they may (and the breaker's probe goes).
    "formation-resume": {"task": "formation.resume_formation", "schedule": 10.0},
    "retention": {"task": "formation.enforce_retention", "schedule": 3600.0},
    "memory-context-refresh": {"task": "reflections.memory_context_refresh_active", "schedule": 300.0},
    # Pending search statistics (appended by database triggers) folded into the kept ones; reads are exact either way,
    # folding keeps what they add up small.
    "corpus-statistics-fold": {"task": "core.corpus_statistics_fold", "schedule": 30.0},
    # Accesses that searches logged (facts/services/access.py), folded into the facts' access counts and times.
    "facts-access-fold": {"task": "facts.fold_accesses", "schedule": 10.0},
    # Per-agent HNSW indexes of agents that grew past MEMORY_SEARCH_HNSW_MIN_SHARED_FACTS
    # (facts/services/vector_indexes.py).
    "fact-vector-indexes": {"task": "facts.vector_indexes_maintain", "schedule": 600.0},
    # Webhook deliveries due (retries, and any whose queueing after commit was lost).
    "webhooks-sweep": {"task": "webhooks.sweep_deliveries", "schedule": 30.0},
    "webhooks-prune": {"task": "webhooks.prune_events", "schedule": crontab(hour=4, minute=0)},
    # Only agents opted in through CLEANUP_DUPLICATE_FACTS_AGENTS; off for everyone else.
    "cleanup-duplicate-facts-nightly": {
        "task": "facts.cleanup_duplicate_facts_nightly",
        "schedule": crontab(hour=3, minute=15),
    },
}
