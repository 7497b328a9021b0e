"""What the sensitive-data rules kept out of memory, counted per agent in the admin: a column of the agent list, a
table by kind on the agent's page, and the findings themselves (never the secret)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from agents.models import Agent
from core.models import JobStatus, SensitiveDataFinding
from core.safety.sensitive import SensitiveDataPolicy
from formation.models import FormationJob
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


def _finding(agent: Agent, kind: str, *, action: str = "withheld", job: FormationJob | None = None):
    return SensitiveDataFinding.objects.create(
        agent=agent,
        kind=kind,
        action=action,
        target="fact",
        job_kind="formation" if job else "",
        job_id=job.pk if job else None,
    )


def test_counts_per_agent_leave_out_failed_jobs(admin_client, agent, session):
    other = AgentFactory(external_id="quiet-agent")
    failed = FormationJob.objects.create(session=session, trigger="explicit", status=JobStatus.FAILED)
    succeeded = FormationJob.objects.create(session=session, trigger="explicit", status=JobStatus.SUCCEEDED)
    _finding(agent, "password", job=succeeded)
    _finding(agent, "password", job=failed)
    _finding(agent, "card_number", action="redacted")

    listing = admin_client.get(reverse("admin:agents_agent_changelist")).content.decode()
    rows = listing.split("<tr")
    row_of = {name: next(row for row in rows if f">{name}</a>" in row) for name in (agent.external_id, "quiet-agent")}
    assert '<td class="field-secrets_kept_out">2</td>' in row_of[agent.external_id]
    assert '<td class="field-secrets_kept_out">0</td>' in row_of[other.external_id]

    page = admin_client.get(reverse("admin:agents_agent_change", args=[agent.pk])).content.decode()
    assert "<tr><td>password or PIN</td><td>1</td><td>0</td></tr>" in page
    assert "<tr><td>card number</td><td>0</td><td>1</td></tr>" in page
    assert admin_client.get(reverse("admin:core_sensitivedatafinding_changelist")).status_code == 200


def test_the_policy_is_set_on_the_agent_page(admin_client, agent):
    page = admin_client.get(reverse("admin:agents_agent_change", args=[agent.pk])).content.decode()
    assert 'name="sensitive_data"' in page
    agent.refresh_from_db()
    assert agent.sensitive_data == SensitiveDataPolicy.WITHHOLD
