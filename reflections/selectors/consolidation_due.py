"""Which scopes consolidation would work on when asked for everything due."""

from __future__ import annotations

from django.db.models import Count, F, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from agents.models import Agent
from agents.selectors.agent_settings import agent_thresholds
from conversations.models import Session
from reflections.models import ConsolidatedMemory, ConsolidationJob, MemoryScope, Reflection
from reflections.services.consolidation import ScopeKey
from reflections.services.session_summary import session_summary_due

# Consolidation of a session's buffer is its summary: a step of its own in the LLM figures.
SUMMARY_STEP = "summarize_session"


def scopes_due_for_consolidation(*, agent: Agent | None = None) -> list[ScopeKey]:
    """Scopes whose buffer of unabsorbed reflections reached the agent's threshold, and sessions whose rolling
    summary is due by the message cadence (the same rules formation applies after each run)."""
    buffers = Reflection.objects.filter(absorbed=False)
    if agent is not None:
        buffers = buffers.filter(agent=agent)
    thresholds = {}
    due = []
    for row in (
        buffers.values("agent_id", "scope", "user_id", "session_id")
        .annotate(n=Count("id"))
        .order_by("agent_id", "scope", "user_id", "session_id")
    ):
        if row["agent_id"] not in thresholds:
            thresholds[row["agent_id"]] = agent_thresholds(agent=Agent.objects.get(pk=row["agent_id"]))
        if row["n"] >= thresholds[row["agent_id"]].consolidation_threshold(row["scope"]):
            due.append(ScopeKey(row["agent_id"], row["scope"], row["user_id"], row["session_id"]))
    summarized_through = ConsolidatedMemory.objects.filter(scope=MemoryScope.SESSION, session=OuterRef("pk")).values(
        "summarized_through_message_id"
    )[:1]
    # Only sessions with formed messages past their summary can be due; session_summary_due decides for those.
    candidates = Session.objects.annotate(summarized=Coalesce(Subquery(summarized_through), 0)).filter(
        formed_through_message_id__gt=F("summarized")
    )
    if agent is not None:
        candidates = candidates.filter(agent=agent)
    for session in candidates.order_by("pk"):
        key = ScopeKey(session.agent_id, MemoryScope.SESSION, session.user_id, session.pk)
        if key not in due and session_summary_due(session=session):
            due.append(key)
    return due


def session_summary_jobs(job_ids: QuerySet) -> dict[int, str]:
    """Of these consolidation jobs, the session ones: a session's consolidation is its summary, a step of its own in
    the LLM usage figures (formation.selectors.llm_validity)."""
    return dict.fromkeys(
        ConsolidationJob.objects.filter(pk__in=job_ids, scope=MemoryScope.SESSION).values_list("pk", flat=True),
        SUMMARY_STEP,
    )
