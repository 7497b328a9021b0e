"""Services queue tasks by name (core.queueing, each app's task_names.py): every name they use, and every name the
routes send to the formation queue, must be a task the workers register, or the work silently goes nowhere (or to
the wrong worker)."""

from __future__ import annotations

from django.conf import settings

from conversations import task_names as conversations_tasks
from facts import task_names as facts_tasks
from memory_project.celery import app
from reflections import task_names as reflections_tasks


def _names(module) -> set[str]:
    return {value for name, value in vars(module).items() if name.isupper() and isinstance(value, str)}


def test_every_task_name_queued_or_routed_is_a_registered_task():
    app.loader.import_default_modules()  # what a worker imports at start: every app's tasks module
    registered = set(app.tasks)
    queued = _names(conversations_tasks) | _names(facts_tasks) | _names(reflections_tasks)

    assert queued <= registered, queued - registered
    assert set(settings.CELERY_TASK_ROUTES) <= registered, set(settings.CELERY_TASK_ROUTES) - registered


def test_formation_and_consolidation_go_to_the_formation_queue():
    for name in (conversations_tasks.FORM_SESSION_MEMORIES, reflections_tasks.CONSOLIDATE_SCOPE):
        assert settings.CELERY_TASK_ROUTES[name]["queue"] == settings.FORMATION_QUEUE
