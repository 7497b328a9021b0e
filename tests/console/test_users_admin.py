"""End users in the admin: counts and links, export of everything stored about them, erasure with confirmation."""

from __future__ import annotations

import json
import re
from datetime import date
from unittest.mock import patch

import pytest
from django.urls import reverse

from agents.models import EndUser, ErasureRecord
from conversations.models import Message, Session
from facts.models import Fact
from facts.services.facts import fact_create, fact_world_end
from facts.world_time import WorldTime
from tests.category_support import fact_filed

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


def test_the_user_page_shows_their_timeline_in_world_time_order_paged_and_filtered(admin_client, agent, end_user, said):
    denver = fact_create(
        agent=agent,
        user=end_user,
        scopes=["user"],
        content="Gene lived in Denver.",
        world_time=WorldTime(start=date(2019, 1, 1), start_precision="year"),
    )
    fact_world_end(fact=denver, end=date(2023, 5, 1), end_precision="month", reason="moved", source_messages=[said[0]])
    for year in range(2000, 2005):
        fact_create(
            agent=agent,
            user=end_user,
            scopes=["user"],
            content=f"Gene did something in {year}.",
            world_time=WorldTime(start=date(year, 1, 1), start_precision="year"),
        )
    url = reverse("admin:agents_enduser_change", args=[end_user.pk])

    page = admin_client.get(url).content.decode()
    window = admin_client.get(url, {"timeline_from": "2019-01-01", "timeline_to": "2023-12-31"}).content.decode()
    bad = admin_client.get(url, {"timeline_from": "2024-01-01", "timeline_to": "2023-01-01"})

    rows = re.findall(r'data-fact-id="(\d+)" data-happened="(\w+)"', page)
    assert [happened for _, happened in rows] == ["started"] * 6 + ["ended"]
    assert 'id="timeline"' in page and "2019 → 2023-05" in page and "moved" in page
    assert reverse("admin:conversations_message_change", args=[said[0].pk]) in page
    assert re.findall(r'data-happened="(\w+)"', window) == ["started", "ended"]
    assert bad.status_code == 200 and "is before the start" in bad.content.decode()


def test_the_timeline_on_the_user_page_pages_after_its_last_entry(admin_client, agent, end_user, settings):
    for day in range(1, 4):
        fact_create(
            agent=agent,
            user=end_user,
            scopes=["user"],
            content=f"Gene did something on March {day}.",
            world_time=WorldTime(start=date(2020, 3, day), start_precision="day"),
        )
    url = reverse("admin:agents_enduser_change", args=[end_user.pk])

    with patch("console.facts.timeline.CONSOLE_TIMELINE_PAGE", 2):
        first = admin_client.get(url).content.decode()
        next_query = re.search(r'href="\?([^"]+)#timeline" id="timeline-next"', first)[1].replace("&amp;", "&")
        second = admin_client.get(f"{url}?{next_query}").content.decode()

    # The timeline's panel only: the profile panel beside it lists the same facts, filed by the lexicons.
    assert re.findall(r"on March (\d)\.", _timeline_panel(first)) == ["1", "2"]
    assert re.findall(r"on March (\d)\.", _timeline_panel(second)) == ["3"] and 'id="timeline-next"' not in second


def _timeline_panel(page: str) -> str:
    start = page.index('id="timeline"')
    end = page.find('class="operator-panel"', start)
    return page[start : end if end != -1 else len(page)]


def test_the_user_page_shows_their_profile_by_category_ended_entries_marked(admin_client, agent, end_user):
    pottery = fact_filed(agent, end_user, "Gene does pottery", "activities", "pottery")
    fact_filed(
        agent,
        end_user,
        "Gene used to work at Globex",
        "work",
        "Globex",
        world_time=WorldTime(
            start=date(2019, 1, 1), start_precision="year", end=date(2023, 5, 1), end_precision="month"
        ),
    )

    page = admin_client.get(reverse("admin:agents_enduser_change", args=[end_user.pk])).content.decode()

    panel = page[page.index('id="profile"') : page.index('id="timeline"')]
    assert "Activities and hobbies" in panel and f"#{pottery.pk}</a> Gene does pottery" in panel
    rows = re.findall(r'<tr class="profile-entry (\w+)" data-category="(\w+)"', panel)
    assert rows == [("ended", "work"), ("current", "activities")], "in the agent's order of categories"
    assert "2019" in panel and "2023-05" in panel
