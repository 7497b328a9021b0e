"""Reads of formation jobs for the admin's pages."""

from __future__ import annotations

from conversations.models import Session
from formation.models import FormationJob


def session_formation_jobs_recent(*, session: Session, limit: int = 20) -> list[FormationJob]:
    return list(FormationJob.objects.filter(session=session).defer("input").order_by("-started_at")[:limit])
