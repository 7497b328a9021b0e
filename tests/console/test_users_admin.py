"""End users in the admin: counts and links, export of everything stored about them, erasure with confirmation."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from agents.models import EndUser, ErasureRecord
from conversations.models import Message, Session
from facts.models import Fact

pytestmark = pytest.mark.django_db


def test_the_user_page_counts_their_memory_and_links_to_it(admin_client, end_user, paris_fact, user_blob):
    page = admin_client.get(reverse("admin:agents_enduser_change", args=[end_user.pk])).content.decode()

    assert '<td>current facts</td><td class="number">1</td>' in page
    assert '<td>messages</td><td class="number">3</td>' in page
    assert "user=user-1" in page and "session-1" in page
    assert "Erase this user" in page and "Export this user" in page


def test_export_holds_the_users_facts_blobs_sessions_and_messages(admin_client, end_user, paris_fact, user_blob):
    response = admin_client.get(reverse("admin:agents_enduser_export", args=[end_user.pk]))

    records = [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]
    kinds = [record["kind"] for record in records]
    assert kinds == ["export", "user", "session", *["message"] * 3, "fact", "blob", "blob_version"]
    assert records[0]["user"] == "user-1"
    assert records[-1]["fields"]["content"] == "- Gene is a nurse."


def test_erase_confirms_what_goes_then_erases_and_leaves_an_audit_record(admin_client, end_user, paris_fact, user_blob):
    url = reverse("admin:agents_enduser_erase", args=[end_user.pk])

    confirmation = admin_client.get(url).content.decode()
    assert '<td>current facts</td><td class="number">1</td>' in confirmation
    assert "session-1" in confirmation
    assert EndUser.objects.filter(pk=end_user.pk).exists()

    response = admin_client.post(url, {"confirm": "yes"})

    record = ErasureRecord.objects.get()
    assert response["Location"] == reverse("admin:agents_erasurerecord_change", args=[record.pk])
    assert not EndUser.objects.filter(pk=end_user.pk).exists()
    assert not (Fact.objects.exists() or Message.objects.exists() or Session.objects.exists())
    assert record.requested_by == "admin:admin"


def test_a_plain_delete_of_a_user_is_not_offered(admin_client, end_user):
    assert admin_client.post(reverse("admin:agents_enduser_delete", args=[end_user.pk])).status_code == 403
