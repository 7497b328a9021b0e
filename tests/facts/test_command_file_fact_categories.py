"""file_fact_categories: facts formed before categories are filed in batches with the offline lexicons and the
agent's own categories, their relations with their fact's category; a second run files nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from facts.models import Fact, Relation
from facts.services.facts import fact_create
from facts.services.graph import EntityMention
from tests.factories import AgentFactory, EndUserFactory
from tests.graph_support import relation_stated


@pytest.mark.django_db
def test_unfiled_facts_and_their_relations_are_filed_once():
    agent = AgentFactory(
        external_id="shop",
        memory_categories=[{"slug": "orders", "name": "Orders", "examples": ["The user ordered a kettle."]}],
    )
    user = EndUserFactory(agent=agent)
    contents = ["The user's sister Ana lives in Porto.", "The user ordered a toaster.", "The user runs marathons."]
    facts = [fact_create(agent=agent, user=user, scopes=["user"], content=content) for content in contents]
    relation_stated(
        fact=facts[0], subject=EntityMention(name="Ana"), predicate="lives_in", object=EntityMention(name="Porto")
    )
    Fact.objects.update(category="", category_value="")  # formed before categories existed
    Relation.objects.update(category="")

    counted = StringIO()
    call_command("file_fact_categories", "--dry-run", stdout=counted)
    assert "shop: 3 facts to file" in counted.getvalue() and not Fact.objects.exclude(category="").exists()
    out = StringIO()
    call_command("file_fact_categories", "--batch-size", "2", stdout=out)

    assert "shop: 3 facts filed" in out.getvalue()
    assert dict(Fact.objects.values_list("content", "category")) == {
        "The user's sister Ana lives in Porto.": "relationships",
        "The user ordered a toaster.": "orders",
        "The user runs marathons.": "activities",
    }
    assert set(Relation.objects.values_list("category", flat=True)) == {"relationships"}
    again = StringIO()
    call_command("file_fact_categories", stdout=again)
    assert "shop: 0 facts filed" in again.getvalue()
