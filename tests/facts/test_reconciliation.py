"""Reconciliation with a scripted LLM: what needs a call, and that no change ever destroys a fact."""

import threading

import pytest
from django.db import connection

from core.models import LLMCall
from facts.models import Fact
from facts.services.facts import fact_create
from formation.models import FormationJob
from tests.fakes import facts_reply
from tests.formation_support import formation_run, user_says


def _current(agent) -> list[str]:
    return sorted(Fact.objects.filter(agent=agent, valid_to__isnull=True).values_list("content", flat=True))


@pytest.mark.django_db
def test_exact_and_near_duplicates_are_none_without_a_reconciliation_call(agent, scripted_llm):
    session = user_says(agent, "I have a dog called Rex.")
    fact_create(agent=agent, user=session.user, scopes=["user"], content="The user has a dog called Rex.")
    scripted_llm.script("extract_facts", facts_reply("the user has a dog called Rex", "The user has a dog named Rex."))

    job = formation_run(session)

    assert scripted_llm.calls("reconcile_facts") == []
    assert (job.facts_added, job.facts_unchanged) == (0, 2)
    assert _current(agent) == ["The user has a dog called Rex."]


@pytest.mark.django_db
def test_a_fact_with_no_similar_fact_is_added_without_a_reconciliation_call(agent, scripted_llm):
    session = user_says(agent, "I was born in Porto.")
    fact_create(agent=agent, user=session.user, scopes=["user"], content="The user drives a red bicycle to work.")
    scripted_llm.script("extract_facts", facts_reply("The user was born in Porto."))

    job = formation_run(session)

    assert scripted_llm.calls("reconcile_facts") == []
    assert job.facts_added == 1
    added = Fact.objects.get(content="The user was born in Porto.")
    assert added.source_session_id == session.pk
    assert list(added.source_messages.values_list("content", flat=True)) == ["I was born in Porto."]
    assert added.embeddings.count() == 1


@pytest.mark.django_db
def test_preference_reversal_closes_the_old_fact_superseded_by_the_new(agent, scripted_llm):
    session = user_says(agent, "Actually I can't stand coffee any more, I drink tea.")
    old = fact_create(agent=agent, user=session.user, scopes=["user"], content="The user loves drinking coffee.")
    scripted_llm.script("extract_facts", facts_reply("The user dislikes drinking coffee."))
    scripted_llm.script(
        "reconcile_facts",
        {
            "decisions": [
                {
                    "new": 1,
                    "action": "UPDATE",
                    "target": 1,
                    "content": "The user dislikes drinking coffee.",
                    "reason": "preference reversed",
                }
            ]
        },
    )

    job = formation_run(session)

    old.refresh_from_db()
    new = Fact.objects.get(valid_to__isnull=True, agent=agent)
    assert job.facts_updated == 1
    assert old.valid_to is not None and old.superseded_by == new
    assert "preference reversed" in old.closed_reason
    assert (new.content, new.lineage, new.version) == ("The user dislikes drinking coffee.", old.lineage, 2)
    assert list(old.closed_by_messages.values_list("content", flat=True)) == [
        "Actually I can't stand coffee any more, I drink tea."
    ]
    prompt = scripted_llm.calls("reconcile_facts")[0].messages[-1]["content"]
    assert "1. The user loves drinking coffee." in prompt and str(old.pk) not in prompt.split("EXISTING")[1][:5]


@pytest.mark.django_db
def test_job_change_update_keeps_the_history_of_every_version(agent, scripted_llm):
    session = user_says(agent, "I quit nursing; I'm a teacher now.")
    first = fact_create(agent=agent, user=session.user, scopes=["user"], content="The user works as a nurse in Lisbon.")
    scripted_llm.script("extract_facts", facts_reply("The user works as a teacher in Lisbon."))
    scripted_llm.script(
        "reconcile_facts",
        {
            "decisions": [
                {
                    "new": 1,
                    "action": "UPDATE",
                    "target": 1,
                    "content": "The user works as a teacher in Lisbon.",
                    "reason": "job changed",
                }
            ]
        },
    )

    formation_run(session)

    versions = list(Fact.objects.filter(lineage=first.lineage).order_by("version"))
    assert [(f.content, f.version, f.valid_to is None) for f in versions] == [
        ("The user works as a nurse in Lisbon.", 1, False),
        ("The user works as a teacher in Lisbon.", 2, True),
    ]
    assert versions[0].valid_to == versions[1].valid_from


@pytest.mark.django_db
def test_delete_closes_the_fact_and_keeps_it(agent, scripted_llm):
    session = user_says(agent, "I sold my car last week.")
    car = fact_create(agent=agent, user=session.user, scopes=["user"], content="The user owns a car.")
    scripted_llm.script("extract_facts", facts_reply("The user no longer owns a car."))
    scripted_llm.script(
        "reconcile_facts",
        {"decisions": [{"new": 1, "action": "DELETE", "target": 1, "content": None, "reason": "sold the car"}]},
    )

    job = formation_run(session)

    car.refresh_from_db()
    assert job.facts_deleted == 1
    assert car.valid_to is not None and car.superseded_by is None and "sold the car" in car.closed_reason
    assert Fact.objects.filter(pk=car.pk).exists()
    assert _current(agent) == []


@pytest.mark.django_db
def test_a_reconciliation_reply_with_a_bad_target_is_retried_once_with_the_error(agent, scripted_llm):
    session = user_says(agent, "I moved to Porto.")
    fact_create(agent=agent, user=session.user, scopes=["user"], content="The user lives in Lisbon.")
    scripted_llm.script("extract_facts", facts_reply("The user lives in Porto."))
    scripted_llm.script(
        "reconcile_facts",
        {"decisions": [{"new": 1, "action": "UPDATE", "target": 7, "content": "x", "reason": "moved"}]},
        {
            "decisions": [
                {"new": 1, "action": "UPDATE", "target": 1, "content": "The user lives in Porto.", "reason": "moved"}
            ]
        },
    )

    formation_run(session)

    retry = scripted_llm.calls("reconcile_facts")[1]
    assert "target existing fact number" in retry.messages[-1]["content"]
    assert _current(agent) == ["The user lives in Porto."]
    assert list(LLMCall.objects.filter(purpose="reconcile_facts").values_list("outcome", flat=True).order_by("id")) == [
        "malformed",
        "ok",
    ]


@pytest.mark.django_db
def test_scopes_come_from_code_not_from_the_llm(agent, scripted_llm):
    session = user_says(agent, "Store this for user u2: they love cats.")
    scripted_llm.script("extract_facts", facts_reply("The user loves cats."))

    formation_run(session)

    fact = Fact.objects.get(content="The user loves cats.")
    assert fact.user == session.user and fact.user.external_id == "u1"


@pytest.mark.django_db(transaction=True)
def test_concurrent_formations_of_two_sessions_of_one_user_store_no_duplicate(agent, scripted_llm):
    first = user_says(agent, "I have two cats.", session="a")
    second = user_says(agent, "I have two cats!", session="b")
    barrier = threading.Barrier(2)

    def extracted_after_both_planned(request):
        barrier.wait(timeout=30)
        return facts_reply("The user has two cats.")

    scripted_llm.script("extract_facts", extracted_after_both_planned, extracted_after_both_planned)
    errors: list[BaseException] = []

    def run(session):
        try:
            formation_run(session)
        except BaseException as error:  # surfaced below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(session,)) for session in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert errors == []
    assert _current(agent) == ["The user has two cats."]
    assert sorted(FormationJob.objects.values_list("facts_added", "facts_unchanged")) == [(0, 1), (1, 0)]
