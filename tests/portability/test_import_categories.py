"""Importers file what they import (docs/decisions/0053): LoCoMo observations and mem0 memories with the offline
lexicons, values canonical for their person, relations with their fact's category; the native format carries
category and value, and an export written before categories still imports, filed."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from facts.models import Fact, Relation
from facts.services.facts import fact_create
from tests.export_support import export_rows
from tests.factories import AgentFactory, EndUserFactory

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "import"


def _import(format: str, path: Path, agent: str) -> None:
    arguments = [str(path), "--format", format, "--agent", agent, "--embed-messages-here"]
    call_command("import_memories", *arguments, stdout=StringIO(), stderr=StringIO())


@pytest.mark.django_db
@pytest.mark.parametrize(("format", "name"), [("locomo", "locomo_sample.json"), ("mem0", "mem0.json")])
def test_imported_facts_and_their_relations_are_filed(format, name):
    _import(format, FIXTURES / name, "bench")

    facts = list(Fact.objects.all())
    assert facts and all(fact.category for fact in facts), [(fact.content, fact.category) for fact in facts]
    for relation in Relation.objects.prefetch_related("source_facts"):
        assert relation.category == relation.source_facts.first().category


@pytest.mark.django_db
def test_the_native_format_carries_the_filing_and_an_older_export_imports_filed(tmp_path):
    agent = AgentFactory(external_id="source")
    user = EndUserFactory(agent=agent)
    fact = fact_create(agent=agent, user=user, scopes=["user"], content="The user carves spoons from birch.")
    Fact.objects.filter(pk=fact.pk).update(category="activities", category_value="spoon carving")
    rows = export_rows("source", tmp_path / "source.jsonl")

    _import("native", tmp_path / "source.jsonl", "copy")

    assert Fact.objects.filter(agent__external_id="copy").values_list("category", "category_value").get() == (
        "activities",
        "spoon carving",
    )
    for row in rows:
        if row["kind"] == "fact":
            del row["fields"]["category"], row["fields"]["category_value"]
    older = tmp_path / "older.jsonl"
    older.write_text("".join(json.dumps(row) + "\n" for row in rows))

    _import("native", older, "older")

    assert Fact.objects.filter(agent__external_id="older").values_list("category", "category_value").get() == (
        "activities",
        "woodcarving",
    )
