from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from agents.models import EndUser
from reflections.models import ConsolidatedMemory, Reflection
from reflections.services.reflections import reflection_create
from tests.factories import EndUserFactory
from tests.formation_support import wait_until


def _reflections(agent, user: EndUser, n: int) -> list[Reflection]:
    return [
        reflection_create(agent=agent, scope="user", user=user, content=f"{user.external_id} prefers answer style {i}")
        for i in range(n)
    ]


def _consolidate(*options: str) -> str:
    out = StringIO()
    call_command("consolidate", *options, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_a_users_blob_is_consolidated_on_request_below_the_threshold(agent):
    gene = EndUserFactory(agent=agent, external_id="gene")
    buffered = _reflections(agent, gene, 2)

    output = _consolidate("--agent", agent.external_id, "--user", "gene")

    assert "consolidated user scope" in output and "version 1 absorbed 2 reflections" in output
    blob = ConsolidatedMemory.objects.get(agent=agent, scope="user", user=gene)
    assert blob.content
    assert all(Reflection.objects.get(pk=r.pk).consolidated_into == blob for r in buffered)
    assert "nothing user scope" in _consolidate("--agent", agent.external_id, "--user", "gene")


@pytest.mark.django_db
def test_due_consolidates_only_buffers_at_their_threshold(agent, settings):
    settings.CONSOLIDATION_THRESHOLD_USER = 3
    full = EndUserFactory(agent=agent, external_id="full")
    short = EndUserFactory(agent=agent, external_id="short")
    _reflections(agent, full, 3)
    _reflections(agent, short, 2)

    dry = _consolidate("--due", "--dry-run")
    assert dry.count("would consolidate user scope") == 1 and f"user {full.pk}," in dry

    _consolidate("--due", "--agent", agent.external_id)

    assert ConsolidatedMemory.objects.filter(user=full).exists()
    assert not ConsolidatedMemory.objects.filter(user=short).exists()
    assert Reflection.objects.filter(user=short, absorbed=False).count() == 2


@pytest.mark.django_db
def test_the_agents_own_blob_and_argument_errors(agent):
    reflection_create(agent=agent, scope="agent", content="Users ask about opening hours")

    assert "consolidated agent scope" in _consolidate("--agent", agent.external_id)
    assert ConsolidatedMemory.objects.filter(agent=agent, scope="agent").exists()
    with pytest.raises(CommandError, match="--due takes at most --agent"):
        _consolidate("--due", "--agent", agent.external_id, "--user", "x")
    with pytest.raises(CommandError, match="has no session 'nope'"):
        _consolidate("--agent", agent.external_id, "--session", "nope")


@pytest.mark.django_db(transaction=True)
def test_queue_hands_the_scope_to_the_workers(agent, celery_worker_process):
    gene = EndUserFactory(agent=agent, external_id="gene")
    _reflections(agent, gene, 2)

    assert "queued user scope" in _consolidate("--agent", agent.external_id, "--user", "gene", "--queue")

    wait_until(
        lambda: ConsolidatedMemory.objects.filter(user=gene).exists(),
        timeout=60,
        what="the worker's consolidation",
        process=celery_worker_process,
    )
    assert not Reflection.objects.filter(user=gene, absorbed=False).exists()
