"""Entities in the admin: the list searched by any name and filtered; the entity's page with its relations drawn as
a server-side SVG (labels escaped), the current relations, the history of each and the facts; rename and merge
through the services, refused where the services refuse and for an operator who may only view."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from facts.models import Entity, EntityType, Relation
from facts.services.graph import EntityMention
from tests.factories import EndUserFactory
from tests.graph_support import LYON, MARIA, relation_stated_by_new_fact, sister_graph_create

pytestmark = pytest.mark.django_db

CHANGELIST = reverse("admin:facts_entity_changelist")


def _page(admin_client, entity: Entity) -> str:
    response = admin_client.get(reverse("admin:facts_entity_change", args=[entity.pk]))
    assert response.status_code == 200
    return response.content.decode()


def _listed(admin_client, **query) -> list[str]:
    html = admin_client.get(CHANGELIST, query).content.decode()
    return re.findall(r"<td class=\"field-name\"><a href=\"[^\"]+\">([^<]+)</a>", html)


def test_the_list_is_searched_by_any_name_and_filtered_by_type_and_user(admin_client, agent, end_user):
    sister_graph_create(agent=agent, user=end_user)
    other = EndUserFactory(agent=agent, external_id="user-2")
    relation_stated_by_new_fact(
        agent=agent,
        user=other,
        content="Marius is 40",
        subject=EntityMention("Marius", EntityType.PERSON),
        predicate="age",
        value="40",
    )

    assert _listed(admin_client, q="mia") == ["Maria"]
    assert sorted(_listed(admin_client, q="mar")) == ["Maria", "Marius"]
    assert sorted(_listed(admin_client, entity_type="organisation")) == ["Acme", "Globex"]
    assert _listed(admin_client, user="user-2") == ["Marius"]
    assert "field-current_relations" in admin_client.get(CHANGELIST).content.decode()


def test_the_entity_page_draws_its_relations_and_lists_their_history(admin_client, agent, end_user):
    graph = sister_graph_create(agent=agent, user=end_user)
    relation_stated_by_new_fact(
        agent=agent, user=end_user, content="Maria lives in Lyon", subject=MARIA, predicate="lives_in", object=LYON
    )

    html = _page(admin_client, graph.maria)

    svg = re.search(r'<svg[^>]*id="entity-graph".*?</svg>', html, re.DOTALL).group(0)
    assert svg.count('class="node entity centre"') == 1
    # the user, Acme, Globex, Lyon and the value "34": one node each
    assert len(re.findall(r'class="node (?:entity|value)"', svg)) == 5
    assert len(re.findall(r'class="edge current"', svg)) == 4
    assert re.findall(r'class="tie current"[^>]*data-predicate="([a-z_]+)"', svg) == ["based_in"]  # Globex -> Lyon
    ended = re.findall(r'<g class="edge ended"[^>]*data-predicate="works_at">.*?</g>', svg, re.DOTALL)
    assert len(ended) == 1 and 'stroke-dasharray="6 4"' in ended[0]
    assert reverse("admin:facts_entity_change", args=[graph.globex.pk]) in svg
    history = re.search(r'<table[^>]*id="relation-history".*?</table>', html, re.DOTALL).group(0)
    works_at = re.search(r'<tbody class="relation-group" data-predicate="works_at">.*?</tbody>', history, re.DOTALL)
    rows = works_at.group(0)
    assert rows.index("Acme") < rows.index("Globex") and "new job" in rows
    assert reverse("admin:facts_fact_change", args=[graph.old_job.pk]) in rows
    assert reverse("admin:facts_fact_change", args=[graph.new_job.pk]) in rows
    assert 'id="rename-form"' in html and "mia" in html


def test_every_label_is_escaped(admin_client, agent, end_user):
    graph = sister_graph_create(agent=agent, user=end_user)
    hostile = relation_stated_by_new_fact(
        agent=agent,
        user=end_user,
        content="Maria knows a hostile name",
        subject=MARIA,
        predicate="knows",
        object=EntityMention('<script>alert("x")</script>', aliases=("a&b",)),
    ).object_entity
    relation_stated_by_new_fact(
        agent=agent,
        user=end_user,
        content="Maria has a hostile motto",
        subject=MARIA,
        predicate="motto",
        value='"/><image href=x onerror=alert(1)>',
    )

    html = _page(admin_client, graph.maria) + _page(admin_client, hostile)

    assert "<script>alert" not in html and "<image href=x" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html


def test_rename_keeps_the_old_name_as_an_alias(admin_client, agent, end_user):
    graph = sister_graph_create(agent=agent, user=end_user)

    response = admin_client.post(reverse("admin:facts_entity_rename", args=[graph.maria.pk]), {"name": "Maria Silva"})

    graph.maria.refresh_from_db()
    assert response.status_code == 302 and response["Location"] == reverse(
        "admin:facts_entity_change", args=[graph.maria.pk]
    )
    assert graph.maria.name == "Maria Silva" and {"maria", "mia", "maria silva"} <= set(graph.maria.aliases)
    assert admin_client.get(reverse("admin:facts_entity_rename", args=[graph.maria.pk])).status_code == 405
    admin_client.post(reverse("admin:facts_entity_rename", args=[graph.maria.pk]), {"name": "  "})
    graph.maria.refresh_from_db()
    assert graph.maria.name == "Maria Silva"


def _merge(admin_client, entities: list[Entity], **extra):
    data = {"action": "merge_selected", "_selected_action": [str(entity.pk) for entity in entities]} | extra
    return admin_client.post(CHANGELIST, data)


def test_merge_asks_which_to_keep_then_moves_names_and_relations(admin_client, agent, end_user):
    graph = sister_graph_create(agent=agent, user=end_user)
    twin = relation_stated_by_new_fact(
        agent=agent,
        user=end_user,
        content="M. Silva lives in Lyon",
        subject=EntityMention("M. Silva", EntityType.PERSON),
        predicate="lives_in",
        object=LYON,
    ).subject

    confirmation = _merge(admin_client, [graph.maria, twin]).content.decode()
    response = _merge(admin_client, [graph.maria, twin], apply="yes", kept=str(graph.maria.pk))

    assert "Merge two entities?" in confirmation and "M. Silva" in confirmation and 'name="kept"' in confirmation
    assert response.status_code == 302
    twin.refresh_from_db()
    graph.maria.refresh_from_db()
    assert twin.merged_into_id == graph.maria.pk and twin.aliases == []
    assert "m. silva" in graph.maria.aliases
    assert Relation.objects.get(predicate="lives_in").subject_id == graph.maria.pk
    merged_page = _page(admin_client, twin)
    assert 'id="merged-into"' in merged_page and 'id="rename-form"' not in merged_page


def test_merge_refuses_what_the_service_refuses_and_needs_two(admin_client, agent, end_user):
    graph = sister_graph_create(agent=agent, user=end_user)

    refused = _merge(admin_client, [graph.maria, graph.me], apply="yes", kept=str(graph.maria.pk))
    three = _merge(admin_client, [graph.maria, graph.acme, graph.globex], apply="yes", kept=str(graph.maria.pk))

    assert refused.status_code == 302 and three.status_code == 302
    messages = [str(message) for message in admin_client.get(CHANGELIST).context["messages"]]
    assert any("Not merged" in message for message in messages)
    assert any("exactly two" in message for message in messages)
    assert not Entity.objects.filter(merged_into__isnull=False).exists()


def test_an_operator_who_may_only_view_cannot_rename_or_merge(agent, end_user, django_user_model):
    graph = sister_graph_create(agent=agent, user=end_user)
    viewer = django_user_model.objects.create_user("viewer", password="a-long-viewer-password", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_entity"))
    client = Client()
    client.force_login(viewer)

    page = client.get(reverse("admin:facts_entity_change", args=[graph.maria.pk])).content.decode()
    client.post(reverse("admin:facts_entity_rename", args=[graph.maria.pk]), {"name": "Hijacked"})
    _merge(client, [graph.maria, graph.acme], apply="yes", kept=str(graph.maria.pk))

    assert 'id="entity-graph"' in page and 'id="rename-form"' not in page
    graph.maria.refresh_from_db()
    graph.acme.refresh_from_db()
    assert graph.maria.name == "Maria" and graph.acme.merged_into_id is None


def test_a_relation_has_a_read_only_page_with_its_sources(admin_client, agent, end_user):
    graph = sister_graph_create(agent=agent, user=end_user)
    ended = Relation.objects.get(subject=graph.maria, object_entity=graph.acme)

    listed = admin_client.get(reverse("admin:facts_relation_changelist"), {"status": "ended"}).content.decode()
    page = admin_client.get(reverse("admin:facts_relation_change", args=[ended.pk])).content.decode()
    changed = admin_client.post(reverse("admin:facts_relation_change", args=[ended.pk]), {"predicate": "owns"})

    assert "Acme" in listed and "Globex" not in listed
    assert reverse("admin:facts_fact_change", args=[graph.old_job.pk]) in page and "new job" in page
    assert reverse("admin:facts_relation_change", args=[ended.pk]) in _page(admin_client, graph.maria)
    assert changed.status_code == 403
    ended.refresh_from_db()
    assert ended.predicate == "works_at"


def test_the_entity_page_shows_its_timeline(admin_client, agent, end_user):
    graph = sister_graph_create(agent=agent, user=end_user)

    page = _page(admin_client, graph.maria)

    rows = re.findall(r'data-fact-id="(\d+)" data-happened="(\w+)"', page)
    assert (str(graph.new_job.pk), "corrected") in rows and (str(graph.old_job.pk), "started") in rows
    assert 'id="timeline"' in page and "new job" in page
