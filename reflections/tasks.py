"""Background jobs of the reflections app. Tasks take ids or nothing, and are idempotent."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from conversations.models import Session
from reflections.selectors.context import memory_context_refresh


@shared_task(name="reflections.memory_context_refresh_active", ignore_result=True)
def memory_context_refresh_active() -> int:
    """Beat, every 5 minutes: re-cache the always-in-context block of every recently active, open session, so the
    next read is a cache hit even after an invalidation. Running it twice only recomputes the same blocks."""
    active_since = timezone.now() - timedelta(minutes=settings.MEMORY_CONTEXT_REFRESH_ACTIVE_MINUTES)
    sessions = (
        Session.objects.filter(
            last_activity_at__gte=active_since, closed_at__isnull=True, agent__always_in_context_enabled=True
        )
        .select_related("agent", "user")
        .order_by("pk")
    )
    refreshed = 0
    for session in sessions.iterator(chunk_size=500):
        memory_context_refresh(agent=session.agent, user=session.user, session=session)
        refreshed += 1
    return refreshed
