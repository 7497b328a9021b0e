"""Counts of feedback on facts, per rating: a fact's (its lineage: feedback follows the fact across versions) and an
agent's, for the console."""

from __future__ import annotations

import uuid
from collections import Counter

from django.db.models import Count

from facts.models import FactFeedback, FeedbackOutcome


def fact_feedback_counts(*, lineage: uuid.UUID) -> Counter[str]:
    rows = FactFeedback.objects.filter(lineage=lineage).values("rating").annotate(n=Count("id")).order_by()
    return Counter({row["rating"]: row["n"] for row in rows})


def agent_feedback_counts(*, agent_id: int) -> tuple[Counter[str], int]:
    """Feedback on the agent's facts per rating, and how much waits for review."""
    feedback = FactFeedback.objects.filter(agent_id=agent_id)
    rows = feedback.values("rating").annotate(n=Count("id")).order_by()
    pending = feedback.filter(outcome=FeedbackOutcome.PENDING_REVIEW).count()
    return Counter({row["rating"]: row["n"] for row in rows}), pending
