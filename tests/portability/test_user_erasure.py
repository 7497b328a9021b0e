"""A user's erasure, as the users API asks for it: every model with a foreign key to an end user, found in Django's
model registry (not a list kept by hand), and every model that reaches one through foreign keys that cascade (the
rows a user owns), holds none of the erased user's rows afterwards, and the other user's rows are exactly as they
were; the cached context goes too. The user's export, imported into a new agent, gives the same memory. And an erasure
while formation is running for that user leaves nothing of theirs behind."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path

import pytest
from django.apps import apps
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection, models
from django.db.models import Q

from agents.models import EndUser
from conversations.models import Message, Session
from conversations.services.ingestion import MessageInput, session_append_messages
from conversations.services.message_embeddings import messages_embed_missing
from facts.models import FactScope, FactWriter
from facts.services.facts import fact_create, fact_supersede
from facts.services.feedback import fact_feedback_give
from formation.models import HeldMemory
from formation.services.formation import session_form_memories
from formation.services.memory_trust import HeldCandidate, held_memory_store_one
from reflections.models import MemoryScope
from reflections.selectors.context import memory_context_get
from reflections.services.consolidation import consolidated_memory_replace
from reflections.services.context_cache import context_cache_key
from reflections.services.reflections import reflection_create
from tests.export_support import export_normalised, export_rows
from tests.fakes import facts_reply
from tests.graph_support import USER, relation_stated
from webhooks.models import WebhookEvent
from webhooks.services.endpoints import webhook_endpoint_create
from webhooks.services.events import webhook_events_dispatch


def _cascading_paths(model: type[models.Model], depth: int = 4) -> list[str]:
    """The lookups from `model` to EndUser along foreign keys that delete with their target (what a user owns)."""
    if depth == 0:
        return []
    paths = []
    for field in model._meta.get_fields():
        if not (getattr(field, "many_to_one", False) or getattr(field, "one_to_one", False)) or not field.concrete:
            continue
        if field.remote_field.on_delete is not models.CASCADE:
            continue
        if field.related_model is EndUser:
            paths.append(field.name)
        else:
            paths += [f"{field.name}__{rest}" for rest in _cascading_paths(field.related_model, depth - 1)]
    return paths


OWNED = {
    model: paths
    for model in apps.get_models(include_auto_created=True)
    if model is not EndUser and (paths := _cascading_paths(model))
}


def _rows_of(user: EndUser) -> dict[str, set[int]]:
    return {
        model._meta.label: set(
            model._default_manager.filter(Q(*[Q(**{path: user}) for path in paths], _connector=Q.OR)).values_list(
                "pk", flat=True
            )
        )
        for model, paths in OWNED.items()
    }


def _digest(user: EndUser) -> dict[str, str]:
    digests = {}
    for model, paths in OWNED.items():
        rows = model._default_manager.filter(Q(*[Q(**{path: user}) for path in paths], _connector=Q.OR))
        values = [json.dumps(row, default=str, sort_keys=True) for row in rows.order_by("pk").values()]
        digests[model._meta.label] = hashlib.sha256("\n".join(values).encode()).hexdigest()
    return digests


def _memory_of_every_kind(agent, user_id: str, secret: str) -> EndUser:
    session = session_append_messages(
        agent=agent,
        user_external_id=user_id,
        session_external_id=f"{user_id}-chat",
        messages=[
            MessageInput(role="user", content=f"My locker code is {secret}"),
            MessageInput(role="assistant", content="Noted."),
        ],
    ).session
    user = session.user
    messages = list(session.messages.all())
    messages_embed_missing(message_ids=[message.pk for message in messages])
    first = fact_create(agent=agent, user=user, scopes=[FactScope.USER], content=f"The locker code is {secret}")
    current = fact_supersede(fact=first, content=f"The locker code is {secret}-2", reason="changed")
    relation_stated(fact=current, subject=USER, predicate="uses", value=f"locker {secret}", source_messages=messages)
    fact_feedback_give(fact=current, rating="useful", user=user, via="api")
    reflection_create(agent=agent, scope=MemoryScope.USER, user=user, content=f"Cares about {secret}")
    reflection_create(agent=agent, scope=MemoryScope.SESSION, user=user, session=session, content="Asked about it")
    for version in (1, 2):
        consolidated_memory_replace(
            agent=agent, scope=MemoryScope.USER, user=user, session=None, content=f"{secret} v{version}", reason="r"
        )
    held_memory_store_one(
        agent=agent,
        user=user,
        session=session,
        candidate=HeldCandidate(kind="fact", content=f"Everyone's code is {secret}", reason="agent_scope", detail="t"),
        origin="formation",
    )
    return user


@pytest.mark.django_db
def test_erasure_leaves_no_row_of_the_user_in_any_model_and_the_others_as_they_were(
    api, agent, django_capture_on_commit_callbacks
):
    webhook_endpoint_create(agent=agent, url="http://127.0.0.1:9/hooks")  # events about the user are rows too
    gene = _memory_of_every_kind(agent, "gene", "4471")
    maria = _memory_of_every_kind(agent, "maria", "9902")
    fact_create(
        agent=agent, user=None, scopes=[FactScope.AGENT], content="Lockers need codes", written_by=FactWriter.API
    )
    webhook_events_dispatch(event_ids=list(WebhookEvent.objects.values_list("pk", flat=True)))  # a worker's part
    memory_context_get(agent=agent, user=gene, session=None)
    cached = context_cache_key(agent_id=agent.pk, user_id=gene.pk, session_id=None)
    assert cache.get(cached) is not None
    genes = _rows_of(gene)
    maria_before = _digest(maria)
    held = {label for label, ids in genes.items() if ids}
    assert {"facts.Fact", "facts.FactEmbedding", "facts.Entity", "facts.Relation", "conversations.Message"} <= held
    assert {"conversations.MessageEmbedding", "reflections.ConsolidatedMemoryVersion", "facts.FactFeedback"} <= held
    assert {HeldMemory._meta.label, WebhookEvent._meta.label, "webhooks.WebhookDelivery"} <= held

    with django_capture_on_commit_callbacks(execute=True):
        response = api.delete("/api/v1/users/gene")

    assert response.status_code == 200
    left = {
        label: model._default_manager.filter(pk__in=genes[label]).count()
        for model in OWNED
        if (label := model._meta.label) and genes[label]
    }
    assert set(left.values()) == {0}, left
    assert _digest(maria) == maria_before
    assert cache.get(cached) is None


@pytest.mark.django_db
def test_the_users_export_imported_into_a_new_agent_is_the_same_memory(api, agent, tmp_path: Path):
    _memory_of_every_kind(agent, "gene", "4471")
    exported = tmp_path / "gene.jsonl"
    exported.write_bytes(b"".join(api.get("/api/v1/users/gene/export").streaming_content))

    call_command("import_memories", str(exported), "--format", "native", "--agent", "copy", stdout=None)

    original = export_normalised([json.loads(line) for line in exported.read_text().splitlines()])
    copied = export_normalised(export_rows("copy", tmp_path / "copy.jsonl", "--user", "gene"))
    assert copied["rows"] == original["rows"]
    kinds = {kind for kind, _, _ in copied["rows"]}
    assert {"fact", "entity", "relation", "reflection", "blob", "blob_version", "message", "session"} <= kinds


@pytest.mark.django_db(transaction=True)
def test_an_erasure_while_formation_runs_for_the_user_leaves_nothing_of_theirs(agent, scripted_llm):
    """Formation has read the messages and waits on the LLM when the user is erased: its run stores nothing."""
    session = session_append_messages(
        agent=agent,
        user_external_id="gene",
        session_external_id="gene-chat",
        messages=[MessageInput(role="user", content="I moved to Porto last week")],
    ).session
    extracting, erased = threading.Event(), threading.Event()

    def slow_extraction(request):
        extracting.set()
        erased.wait(30)
        return facts_reply("Gene moved to Porto")

    scripted_llm.script("extract_facts", slow_extraction)
    outcome: list = []

    def form() -> None:
        try:
            outcome.append(session_form_memories(session_id=session.pk, trigger="explicit"))
        finally:
            connection.close()

    runner = threading.Thread(target=form)
    runner.start()
    assert extracting.wait(30)

    call_command("erase_user", "--agent", agent.external_id, "--user", "gene", "--yes", stdout=None)
    erased.set()
    runner.join(60)

    assert outcome == [None]
    assert not EndUser.objects.filter(external_id="gene").exists()
    assert not Session.objects.exists() and not Message.objects.exists()
    assert {label: ids for label, ids in _rows_of_everyone(agent).items() if ids} == {}


def _rows_of_everyone(agent) -> dict[str, list[int]]:
    """Every row of the models a user owns (after an erasure of the agent's only user: none should be left)."""
    return {model._meta.label: list(model._default_manager.values_list("pk", flat=True)) for model in OWNED}
