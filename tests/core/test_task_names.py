"""Services queue tasks by name (core.runtime.queueing, each app's task_names.py): every name they use, and every name
the routes send to the formation queue, must be a task the workers register, or the work silently goes nowhere (or to
the wrong worker)."""

from __future__ import annotations

import pytest
from django.conf import settings

from conversations import task_names as conversations_tasks
from facts import task_names as facts_tasks
from formation import task_names as formation_tasks
from memory_project.celery import app
from reflections import task_names as reflections_tasks
from reflections.models import ConsolidatedMemory, ConsolidationJob, MemoryScope, Reflection
from reflections.tasks import scope_consolidate_legacy_task


def _names(module) -> set[str]:
    return {value for name, value in vars(module).items() if name.isupper() and isinstance(value, str)}


def test_every_task_name_queued_or_routed_is_a_registered_task():
    app.loader.import_default_modules()  # what a worker imports at start: every app's tasks module
    registered = set(app.tasks)
    queued = _names(conversations_tasks) | _names(facts_tasks) | _names(formation_tasks) | _names(reflections_tasks)

    assert queued <= registered, queued - registered
    assert set(settings.CELERY_TASK_ROUTES) <= registered, set(settings.CELERY_TASK_ROUTES) - registered
    assert set(formation_tasks.LEGACY_NAMES) <= registered, set(formation_tasks.LEGACY_NAMES) - registered
    scheduled = {entry["task"] for entry in app.conf.beat_schedule.values()}
    assert scheduled <= registered, scheduled - registered


def test_formation_and_consolidation_go_to_the_formation_queue():
    old_names = ("conversations.form_session_memories", "conversations.consolidate_scope")
    for name in (formation_tasks.FORM_SESSION_MEMORIES, reflections_tasks.CONSOLIDATE_SCOPE, *old_names):
        assert settings.CELERY_TASK_ROUTES[name]["queue"] == settings.FORMATION_QUEUE


@pytest.mark.django_db
def test_the_consolidation_task_s_old_name_still_consolidates(agent, end_user, scripted_llm):
    """What an older release queued under conversations.consolidate_scope runs the task under its new name."""
    Reflection.objects.create(agent=agent, user=end_user, scope=MemoryScope.USER, content="Prefers e-mail.")
    scripted_llm.script("consolidate", {"content": "- Prefers e-mail."})

    job_id = scope_consolidate_legacy_task.apply(args=[agent.pk, "user", end_user.pk, None, True]).get()

    blob = ConsolidatedMemory.objects.get(agent=agent, user=end_user, scope=MemoryScope.USER)
    assert ConsolidationJob.objects.get(pk=job_id).memory == blob and blob.content == "- Prefers e-mail."
