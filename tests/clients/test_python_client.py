"""The Python client (clients/python) against a live server: the ingestion endpoints and its error type; and its
install from a checkout."""

from __future__ import annotations

import subprocess
import sys
from datetime import date

import pytest

from conversations.models import Message
from tests.conftest import REPO_DIR
from tests.factories import AgentFactory
from tests.memory_client_support import MemoryAPIError, memory_client_for


@pytest.fixture
def client(live_server):
    agent = AgentFactory(external_id="agent-client")
    return memory_client_for(agent=agent, base_url=live_server.url)


@pytest.mark.django_db(transaction=True)
def test_ingestion_round_trip_with_a_safe_retry(client):
    created = client.session_create(user="gene", session="chat 1")
    turns = [
        {"role": "user", "content": "I moved to Lisbon last month.", "idempotency_key": "m-1"},
        {"role": "assistant", "content": "How are you finding Lisbon?", "idempotency_key": "m-2"},
        {"role": "user", "content": "Loving the light.", "idempotency_key": "m-3"},
    ]

    first = client.messages_append("chat 1", turns)
    retry = client.messages_append("chat 1", turns)

    assert created["session"] == "chat 1" and created["user"] == "gene"
    assert first["created_count"] == 3 and retry["created_count"] == 0
    assert [m["id"] for m in retry["messages"]] == [m["id"] for m in first["messages"]]
    assert [m["content"] for m in client.messages_list("chat 1", page_size=2)] == [t["content"] for t in turns]
    assert client.session_get("chat 1")["message_count"] == 3
    assert client.session_form("chat 1")["session"]["session"] == "chat 1"
    assert client.session_close("chat 1")["closed_at"] is not None
    assert Message.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_api_errors_carry_status_code_and_fields(client):
    with pytest.raises(MemoryAPIError) as missing_user:
        client.messages_append("never-seen", [{"role": "user", "content": "hello"}])
    with pytest.raises(MemoryAPIError) as bad_role:
        client.messages_append("s", [{"role": "robot", "content": "hello"}], user="gene")
    with pytest.raises(MemoryAPIError) as not_found:
        client.session_get("nope")

    assert missing_user.value.status in (400, 409) and "user" in missing_user.value.fields
    assert bad_role.value.status == 400 and "messages.0.role" in bad_role.value.fields
    assert not_found.value.status == 404 and not_found.value.code == "not_found"


@pytest.mark.django_db(transaction=True)
def test_facts_search_and_tools_through_the_client(client):
    saved = client.fact_create(content="Gene's birthday is March 15th", user="gene")
    client.fact_create(content="Support hours are 9am to 5pm CET")
    again = client.fact_create(content="Gene's birthday is March 15th", user="gene")

    hits = client.search(query="When was Gene born?", user="gene", top_k=1, mode="semantic")["results"]
    timing = client.server_timing
    revised = client.fact_update(saved["id"], content="Gene's birthday is March 16th", reason="user corrected it")
    history = client.fact_history(revised["id"])
    client.fact_delete(revised["id"])
    current = list(client.facts_list(user="gene", page_size=1))
    everything = list(client.facts_list(status="all", page_size=1))

    assert again["id"] == saved["id"] and saved["scopes"] == ["user"]
    assert hits[0]["fact"]["id"] == saved["id"] and hits[0]["similarity"] > 0.3
    # The search's stages, from the Server-Timing header (semantic: no full-text statement).
    assert {"vector_sql", "hits_sql", "app"} <= set(timing) and "text_sql" not in timing
    assert [version["content"] for version in history["versions"]] == [
        "Gene's birthday is March 15th",
        "Gene's birthday is March 16th",
    ]
    assert history["versions"][0]["closed_reason"] and client.fact_get(revised["id"])["is_current"] is False
    assert current == [] and len(everything) == 3

    names = {tool["function"]["name"] for tool in client.tools()}
    remembered = client.tool_call(name="save_memory", arguments='{"content": "Gene is vegetarian"}', user="gene")
    found = client.tool_call(name="search_memory", arguments={"query": "diet"}, user="gene")
    mistake = client.tool_call(name="search_memory", arguments="{not json", user="gene")

    assert {"search_memory", "save_memory", "update_memory", "delete_memory"} <= names
    assert remembered["ok"] and remembered["result"]["saved"] is True
    assert found["ok"] and found["result"]["memories"][0]["content"] == "Gene is vegetarian"
    assert mistake["ok"] is False and "JSON" in mistake["error"]


@pytest.mark.django_db(transaction=True)
def test_message_search_through_the_client(client):
    from conversations.services.message_embeddings import messages_embed_missing

    client.messages_append(
        "chat 2",
        [
            {"role": "assistant", "content": "Did you do anything fun last weekend?"},
            {"role": "user", "content": "Yes, we went kayaking on Lake Annecy.", "metadata": {"speaker": "Gene"}},
        ],
        user="gene",
    )
    messages_embed_missing(message_ids=Message.objects.values_list("pk", flat=True))

    hits = client.messages_search(query="Where did Gene go kayaking?", user="gene", top_k=1)["results"]

    assert hits[0]["message"]["content"] == "Yes, we went kayaking on Lake Annecy." and hits[0]["session"] == "chat 2"
    assert hits[0]["vector_rank"] == 1 and hits[0]["text_rank"] == 1


def test_installing_the_client_from_a_checkout_leaves_nothing_behind(tmp_path):
    """`pip install "./clients/python[mcp]"`, as docs/integrations.md says (into a folder here, without the extra's
    dependencies: what is checked is the build), adds nothing to the checkout, and installs the package and its
    console script."""

    def checkout_state() -> str:
        listed = ["git", "status", "--porcelain", "--untracked-files=all", "--ignored", "--", "clients/python"]
        state = subprocess.run(listed, cwd=REPO_DIR, capture_output=True, text=True, check=True).stdout
        return "\n".join(line for line in state.splitlines() if "__pycache__" not in line)

    before = checkout_state()
    install = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(tmp_path / "site")]
    done = subprocess.run([*install, "./clients/python[mcp]"], cwd=REPO_DIR, capture_output=True, text=True)

    assert done.returncode == 0, done.stderr
    assert checkout_state() == before
    assert (tmp_path / "site" / "memory_client" / "py.typed").exists()
    assert (tmp_path / "site" / "bin" / "agent-memory-mcp").exists()


@pytest.mark.django_db(transaction=True)
def test_world_time_holds_at_the_timeline_and_entities_through_the_client(client):
    from facts.models import Fact
    from tests.graph_support import GLOBEX, MARIA, relation_stated

    denver = client.fact_create(content="Gene lived in Denver", user="gene", world_time={"start": "2019"})
    ended = client.fact_update(denver["id"], world_time={"start": "2019", "end": "2023-05"}, reason="moved")
    boulder = client.fact_create(content="Gene lives in Boulder", user="gene", world_time={"start": "2023-05"})
    job = client.fact_create(content="Maria works at Globex", user="gene", world_time={"start": "2021-03-01"})
    relation_stated(fact=Fact.objects.get(pk=job["id"]), subject=MARIA, predicate="works_at", object=GLOBEX)

    in_2021 = client.search(query="Where did Gene live?", user="gene", holds_at=date(2021, 6, 1), mode="text")
    timeline = list(client.user_timeline("gene", time_to=date(2023, 12, 31), page_size=1))
    [maria] = list(client.entities_list(user="gene", q="maria"))
    detail = client.entity_get(maria["id"])
    maria_timeline = list(client.entity_timeline(maria["id"]))
    with pytest.raises(MemoryAPIError) as bad_moment:
        client.search(query="Where did Gene live?", user="gene", holds_at="last year")
    with pytest.raises(MemoryAPIError) as unknown_user:
        list(client.user_timeline("nobody"))

    assert boulder["world_time"] == {
        "start": "2023-05-01",
        "start_precision": "month",
        "end": None,
        "end_precision": "",
        "holds_now": True,
    }
    assert ended["world_time"]["end"] == "2023-05-01" and ended["world_time"]["holds_now"] is False
    held_then = [hit["fact"]["content"] for hit in in_2021["results"]]
    assert held_then[0] == "Gene lived in Denver" and "Gene lives in Boulder" not in held_then
    assert [(entry["fact"]["content"], entry["happened"], entry["at"]) for entry in timeline] == [
        ("Gene lived in Denver", "started", "2019-01-01"),
        ("Maria works at Globex", "started", "2021-03-01"),
        ("Gene lived in Denver", "ended", "2023-05-01"),
        ("Gene lives in Boulder", "started", "2023-05-01"),
    ]
    assert [relation["world_time"]["start"] for relation in detail["relations"]] == ["2021-03-01"]
    assert [entry["fact"]["id"] for entry in maria_timeline] == [job["id"]]
    assert bad_moment.value.status == 400 and "holds_at" in bad_moment.value.fields
    assert unknown_user.value.status == 404
