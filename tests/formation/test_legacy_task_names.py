"""Formation's tasks moved from conversations/ to formation/ (issue 22) and took the new app's names. Work an older
release queued under the old names (or an older beat sends during an upgrade) still runs, on a real worker."""

from __future__ import annotations

import pytest

from formation import task_names as formation_tasks
from formation.models import FormationJob
from memory_project.celery import app
from tests.factories import MessageFactory
from tests.formation_support import wait_until


@pytest.mark.django_db(transaction=True)
def test_a_formation_queued_under_the_old_name_forms_the_session(session, celery_worker_process):
    MessageFactory(session=session, content="I live in Lisbon.", token_count=4)

    app.send_task("conversations.form_session_memories", args=[session.pk, "explicit"])

    job = wait_until(
        lambda: FormationJob.objects.filter(session=session, status="succeeded").first(),
        timeout=60,
        what="formation queued under the old task name",
        process=celery_worker_process,
    )
    assert job.message_count == 1 and job.task_id  # ran as the current task, with its own request


def test_every_old_name_forwards_to_a_current_task():
    app.loader.import_default_modules()
    for old_name, new_name in formation_tasks.LEGACY_NAMES.items():
        assert old_name.startswith("conversations.") and new_name.startswith("formation.")
        assert old_name in app.tasks and new_name in app.tasks
