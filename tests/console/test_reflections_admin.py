"""Blobs and reflections in the admin: edit and restore write versions and refresh the cached context block,
"consolidate now" and "retry" queue the consolidation task, the diff and the buffer are shown."""

from __future__ import annotations

import pytest
from django.urls import reverse

from reflections.models import ConsolidatedMemory, ConsolidationJob, MemoryScope, Reflection
from reflections.selectors.context import memory_context_get
from tests.formation_support import wait_until

pytestmark = pytest.mark.django_db


def _change_url(blob: ConsolidatedMemory) -> str:
    return reverse("admin:reflections_consolidatedmemory_change", args=[blob.pk])


def test_editing_a_blob_writes_a_new_version_and_invalidates_the_cached_block(
    admin_client, agent, end_user, user_blob, django_capture_on_commit_callbacks
):
    assert "Gene lives in Paris." in memory_context_get(agent=agent, user=end_user, session=None).text

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            _change_url(user_blob),
            {"content": "- Gene is a nurse in Lyon.", "reason": "moved", "expected_version": user_blob.version},
        )

    user_blob.refresh_from_db()
    assert response.status_code == 302
    assert (user_blob.version, user_blob.content) == (3, "- Gene is a nurse in Lyon.")
    assert user_blob.change_reason.startswith("moved")
    assert user_blob.past_versions.get(version=2).content == "- Gene is a nurse.\n- Gene lives in Paris."
    assert "Gene is a nurse in Lyon." in memory_context_get(agent=agent, user=end_user, session=None).text


def test_an_edit_of_a_blob_that_changed_meanwhile_is_refused(admin_client, user_blob):
    response = admin_client.post(
        _change_url(user_blob), {"content": "stale edit", "reason": "x", "expected_version": user_blob.version - 1}
    )

    user_blob.refresh_from_db()
    assert response.status_code == 200 and "changed while you were editing" in response.content.decode()
    assert user_blob.version == 2


def test_restore_makes_an_old_text_current_as_a_new_version(admin_client, user_blob):
    response = admin_client.post(reverse("admin:reflections_consolidatedmemory_restore", args=[user_blob.pk, 1]))

    user_blob.refresh_from_db()
    assert response.status_code == 302
    assert (user_blob.version, user_blob.content) == (3, "- Gene is a nurse.")
    assert "restored version 1" in user_blob.change_reason
    assert (
        admin_client.get(reverse("admin:reflections_consolidatedmemory_restore", args=[user_blob.pk, 1])).status_code
        == 405
    )


def test_the_diff_marks_added_and_removed_words(admin_client, user_blob):
    page = admin_client.get(
        reverse("admin:reflections_consolidatedmemory_diff", args=[user_blob.pk]), {"from": 1, "to": 2}
    ).content.decode()

    assert "<ins>" in page and "Paris." in page.split("<ins>", 1)[1]
    assert "+5 words" in page and "−0 words" in page


def test_the_blob_page_lists_versions_and_the_buffer_unabsorbed_first(
    admin_client, agent, end_user, user_blob, buffered_reflection
):
    Reflection.objects.create(
        agent=agent, user=end_user, scope=MemoryScope.USER, content="Already merged note.", absorbed=True
    )

    page = admin_client.get(_change_url(user_blob)).content.decode()

    assert page.index("Gene prefers short answers.") < page.index("Already merged note.")
    assert "1 waiting in the buffer" in page
    assert "Restore this version" in page and 'data-version="1"' in page


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("how", ["consolidate now", "retry the failed job", "consolidate the reflection's scope"])
def test_consolidate_now_and_retry_consolidate_the_scope_on_the_worker(
    admin_client, agent, end_user, user_blob, buffered_reflection, scripted_llm, celery_worker_process, how
):
    failed = ConsolidationJob.objects.create(
        agent=agent, user=end_user, scope=MemoryScope.USER, status="failed", error="ProviderError: timeout"
    )
    url, body = {
        "consolidate now": (reverse("admin:reflections_consolidatedmemory_consolidate", args=[user_blob.pk]), {}),
        "retry the failed job": (
            reverse("admin:reflections_consolidationjob_changelist"),
            {"action": "retry_jobs", "_selected_action": [failed.pk]},
        ),
        "consolidate the reflection's scope": (
            reverse("admin:reflections_reflection_changelist"),
            {"action": "consolidate_scopes_now", "_selected_action": [buffered_reflection.pk]},
        ),
    }[how]

    admin_client.post(url, body)

    # Forced: one buffered reflection is below the threshold, and the worker consolidates it anyway.
    blob = wait_until(
        lambda: ConsolidatedMemory.objects.filter(pk=user_blob.pk, version__gt=user_blob.version).first(),
        timeout=60,
        what="the blob consolidated by the worker",
        process=celery_worker_process,
    )
    assert Reflection.objects.get(pk=buffered_reflection.pk).consolidated_into == blob
    assert scripted_llm.requests == []  # run by the worker, not in the request


def test_an_operator_adds_a_reflection_through_the_service(admin_client, agent, end_user, session):
    response = admin_client.post(
        reverse("admin:reflections_reflection_add"),
        {"agent": agent.pk, "scope": "session", "user": end_user.pk, "session": session.pk, "content": "Be  brief."},
    )

    reflection = Reflection.objects.get()
    assert response.status_code == 302
    assert (reflection.content, reflection.source, reflection.session_id) == ("Be brief.", "manual", session.pk)
