from datetime import UTC, datetime
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from facts.models import Fact, FactWriter
from facts.services.facts import fact_create
from facts.tasks import cleanup_duplicate_facts_nightly
from tests.factories import AgentFactory, EndUserFactory

DIMENSIONS = 384


def _unit(*components: tuple[int, float]) -> np.ndarray:
    vector = np.zeros(DIMENSIONS, dtype=np.float32)
    for axis, value in components:
        vector[axis] = value
    return vector / np.linalg.norm(vector)


def _at_angle(cosine: float, *, steps: int = 1) -> np.ndarray:
    """A unit vector in the plane of axes 0 and 1 whose cosine with axis 0 is cos(steps * acos(cosine))."""
    angle = steps * np.arccos(cosine)
    return _unit((0, float(np.cos(angle))), (1, float(np.sin(angle))))


def _fact(agent, user, content: str, vector: np.ndarray, year: int, scopes=("user",)) -> Fact:
    return fact_create(
        agent=agent,
        user=user,
        scopes=list(scopes),
        content=content,
        embedding=vector,
        valid_from=datetime(year, 1, 1, tzinfo=UTC),
    )


@pytest.fixture
def duplicates(agent, end_user):
    """In one scope: A (oldest), B 0.96-similar to A, C 0.96-similar to B but only 0.84 to A; D unrelated.
    The same vectors in other scopes, which must not be compared with these."""
    # B is written first but is newer knowledge: "oldest" means valid_from, not insertion order.
    b = _fact(agent, end_user, "Gene was born on March 15th", _at_angle(0.96), 2025)
    a = _fact(agent, end_user, "Gene's birthday is March 15th", _at_angle(1.0), 2023)
    c = _fact(agent, end_user, "Gene celebrates on March 15", _at_angle(0.96, steps=2), 2026)
    d = _fact(agent, end_user, "Gene works as a nurse", _unit((5, 1.0)), 2024)
    other_user = EndUserFactory(agent=agent, external_id="other")
    other = _fact(agent, other_user, "Gene was born on March 15th", _at_angle(0.96), 2025)
    agent_wide = _fact(agent, None, "Birthdays are on March 15th", _at_angle(0.97), 2025, scopes=("agent",))
    return {"a": a, "b": b, "c": c, "d": d, "other": other, "agent_wide": agent_wide}


def _current(facts: dict[str, Fact]) -> set[str]:
    return {name for name, fact in facts.items() if Fact.objects.get(pk=fact.pk).valid_to is None}


@pytest.mark.django_db
def test_newer_near_duplicates_are_closed_as_superseded_by_the_oldest(agent, duplicates):
    out = StringIO()
    call_command("cleanup_duplicate_facts", "--agent", agent.external_id, stdout=out)

    assert _current(duplicates) == {"a", "c", "d", "other", "agent_wide"}
    closed = Fact.objects.get(pk=duplicates["b"].pk)
    assert closed.superseded_by_id == duplicates["a"].pk
    assert closed.closed_reason == f"near-duplicate of fact {duplicates['a'].pk} (similarity 0.960)"
    assert Fact.objects.filter(agent=agent).count() == 6  # closed, not deleted
    assert f"closed fact {duplicates['b'].pk} as a duplicate of {duplicates['a'].pk}" in out.getvalue()
    assert "1 near-duplicates closed" in out.getvalue()

    again = StringIO()
    call_command("cleanup_duplicate_facts", "--agent", agent.external_id, stdout=again)
    assert "closed 0 facts in total" in again.getvalue()


@pytest.mark.django_db
def test_dry_run_and_a_higher_threshold_close_nothing(agent, duplicates):
    out = StringIO()
    call_command("cleanup_duplicate_facts", "--dry-run", stdout=out)
    assert f"would close fact {duplicates['b'].pk} as a duplicate of {duplicates['a'].pk}" in out.getvalue()
    assert _current(duplicates) == set(duplicates)

    call_command("cleanup_duplicate_facts", "--threshold", "0.97", stdout=StringIO())
    assert _current(duplicates) == set(duplicates)


@pytest.mark.django_db
def test_agent_option_limits_the_cleanup_to_that_agent(agent, duplicates):
    other_agent = AgentFactory(external_id="other-agent")
    first = _fact(other_agent, None, "Office opens at nine", _at_angle(1.0), 2020, scopes=("agent",))
    second = _fact(other_agent, None, "The office opens at 9", _at_angle(0.99), 2021, scopes=("agent",))

    call_command("cleanup_duplicate_facts", "--agent", "other-agent", stdout=StringIO())

    assert Fact.objects.get(pk=second.pk).superseded_by_id == first.pk
    assert _current(duplicates) == set(duplicates)


@pytest.mark.django_db
def test_nightly_job_runs_only_for_opted_in_agents(settings, agent, duplicates):
    from memory_project.celery import app

    app.loader.import_default_modules()
    entry = app.conf.beat_schedule["cleanup-duplicate-facts-nightly"]
    assert entry["task"] == cleanup_duplicate_facts_nightly.name and entry["task"] in app.tasks

    settings.CLEANUP_DUPLICATE_FACTS_AGENTS = []
    assert cleanup_duplicate_facts_nightly() == {}
    assert _current(duplicates) == set(duplicates)

    settings.CLEANUP_DUPLICATE_FACTS_AGENTS = [agent.external_id]
    assert cleanup_duplicate_facts_nightly() == {agent.external_id: 1}
    assert "b" not in _current(duplicates)


@pytest.mark.django_db
def test_an_operators_fact_is_kept_and_its_older_formed_duplicate_closed(agent, end_user):
    formed = _fact(agent, end_user, "Gene's birthday is March 15th", _at_angle(1.0), 2023)
    curated = fact_create(
        agent=agent,
        user=end_user,
        scopes=["user"],
        content="Gene was born on March 15th",
        embedding=_at_angle(0.96),
        valid_from=datetime(2025, 1, 1, tzinfo=UTC),
        written_by=FactWriter.OPERATOR,
    )

    call_command("cleanup_duplicate_facts", "--agent", agent.external_id, stdout=StringIO())

    assert Fact.objects.get(pk=curated.pk).valid_to is None
    assert Fact.objects.get(pk=formed.pk).superseded_by_id == curated.pk
