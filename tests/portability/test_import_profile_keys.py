"""Key/value user memories import as profile facts: a later value for the same key supersedes an earlier one."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from agents.models import EndUser
from facts.models import Fact
from facts.selectors.profile import user_profile
from tests.factories import AgentFactory


def _write(folder, memories):
    folder.mkdir()
    (folder / "vectors.jsonl").write_text("")
    (folder / "summaries.jsonl").write_text("")
    (folder / "memories.jsonl").write_text("\n".join(json.dumps(memory) for memory in memories))


def _import(folder):
    call_command(
        "import_memories",
        str(folder),
        "--format",
        "mongo-collections",
        "--agent",
        "crm",
        stdout=StringIO(),
        stderr=StringIO(),
    )


@pytest.mark.django_db
def test_key_value_memories_become_the_users_profile_with_history(tmp_path):
    AgentFactory(external_id="crm")
    _write(
        tmp_path / "v1",
        [
            {
                "_id": "m1",
                "user_id": "gene",
                "key": "home-City",
                "value": "Lisbon",
                "updated_at": "2024-01-01T00:00:00Z",
            },
            {
                "_id": "m2",
                "user_id": "gene",
                "key": "home-City",
                "value": "Porto",
                "updated_at": "2024-06-01T00:00:00Z",
            },
        ],
    )

    _import(tmp_path / "v1")
    _import(tmp_path / "v1")

    gene = EndUser.objects.get(external_id="gene")
    profile = user_profile(agent=gene.agent, user=gene)
    assert profile["home_city"].value == "Porto"
    # The earlier value ended in the world: a new version of its lineage, current, without the key.
    lisbon = Fact.objects.filter(content="home City: Lisbon").order_by("version")
    assert [(f.key, f.valid_to is None, f.world_time.ended) for f in lisbon] == [
        ("home_city", False, False),
        ("", True, True),
    ]
    assert lisbon[0].closed_reason == "new value"
    assert Fact.objects.count() == 3  # the second run added nothing
