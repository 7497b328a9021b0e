import pytest
from django.test import Client

from agents.services.api_keys import api_key_create
from conversations.services.ingestion import MessageInput, session_append_messages
from facts.models import Fact, ReferenceChunkEmbedding, ReferenceDocument
from facts.services.reference_documents import (
    reference_chunks_embed_missing,
    reference_document_create,
    reference_text_chunks,
)
from formation.services.formation import session_form_memories
from tests.factories import AgentFactory
from tests.fakes import facts_reply

POLICY = (
    "Returns policy\n\nReturns are accepted within 30 days of purchase with a receipt.\n\n"
    "Shipping is free for orders over 50 euros within Portugal."
)


def _document(agent) -> ReferenceDocument:
    document, _ = reference_document_create(agent=agent, title="Policy", content=POLICY)
    reference_chunks_embed_missing(chunk_ids=document.chunks.values_list("pk", flat=True))
    return document


def test_chunks_pack_paragraphs_and_cut_long_ones_at_sentences():
    long_paragraph = " ".join(f"Sentence number {n} is here." for n in range(100))

    chunks = reference_text_chunks(f"Short intro.\n\n{long_paragraph}")

    assert len(chunks) > 2 and all(len(chunk) <= 800 for chunk in chunks)
    assert chunks[0].startswith("Short intro.") and "Sentence number 99 is here." in chunks[-1]


@pytest.mark.django_db
def test_a_fact_that_only_restates_a_document_is_not_stored(agent, scripted_llm):
    _document(agent)
    session = session_append_messages(
        agent=agent,
        user_external_id="u",
        session_external_id="s",
        messages=[MessageInput(role="user", content="So returns are accepted within 30 days? I have a cat.")],
    ).session
    scripted_llm.script(
        "extract_facts",
        facts_reply(
            "Returns are accepted within 30 days of purchase.",
            "Shipping is free for orders over 50 euros.",
            "The user has a cat named Miso.",
        ),
    )

    job = session_form_memories(session_id=session.pk, trigger="explicit").job

    assert list(Fact.objects.values_list("content", flat=True)) == ["The user has a cat named Miso."]
    assert (job.facts_added, job.facts_unchanged) == (1, 2)


@pytest.mark.django_db
def test_documents_api_registers_once_lists_and_deletes_per_agent(agent):
    _, raw_key = api_key_create(agent=agent)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {raw_key}")
    body = {"title": "Policy", "content": POLICY}

    created = api.post("/api/v1/documents", body, content_type="application/json")
    again = api.post("/api/v1/documents", body, content_type="application/json")

    assert (created.status_code, again.status_code) == (201, 200)
    assert created.json()["id"] == again.json()["id"] and created.json()["chunk_count"] == 1
    assert [d["title"] for d in api.get("/api/v1/documents").json()["results"]] == ["Policy"]
    bad = api.post("/api/v1/documents", {"title": "", "content": "x"}, content_type="application/json")
    assert bad.status_code == 400 and "title" in bad.json()["error"]["fields"]

    _, other_key = api_key_create(agent=AgentFactory())
    other = Client(HTTP_AUTHORIZATION=f"Bearer {other_key}")
    document_id = created.json()["id"]
    assert other.get(f"/api/v1/documents/{document_id}").status_code == 404
    assert other.delete(f"/api/v1/documents/{document_id}").status_code == 404
    assert api.delete(f"/api/v1/documents/{document_id}").status_code == 204
    assert not ReferenceDocument.objects.exists() and not ReferenceChunkEmbedding.objects.exists()


@pytest.mark.django_db
def test_import_documents_registers_a_folder_once(agent, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    (tmp_path / "returns.md").write_text("# Returns policy\n\nReturns are accepted within 30 days.")
    (tmp_path / "shipping.txt").write_text("Shipping is free over 50 euros.")
    (tmp_path / "empty.md").write_text("   ")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")

    first, second = StringIO(), StringIO()
    call_command("import_documents", str(tmp_path), "--agent", agent.external_id, stdout=first)
    call_command("import_documents", str(tmp_path), "--agent", agent.external_id, stdout=second)

    assert sorted(ReferenceDocument.objects.values_list("title", flat=True)) == ["Returns policy", "shipping"]
    assert "2 registered, 0 already registered, 1 empty or invalid" in first.getvalue()
    assert "0 registered, 2 already registered" in second.getvalue()


@pytest.mark.django_db
def test_operators_register_a_document_in_the_admin(admin_client, agent):
    response = admin_client.post(
        "/admin/facts/referencedocument/add/",
        {"agent": agent.pk, "title": "Policy", "content": POLICY, "chunks-TOTAL_FORMS": 0, "chunks-INITIAL_FORMS": 0},
        follow=True,
    )

    assert response.status_code == 200
    document = ReferenceDocument.objects.get(agent=agent)
    assert document.title == "Policy" and document.chunks.count() == 1
    assert admin_client.get(f"/admin/facts/referencedocument/{document.pk}/change/").status_code == 200
