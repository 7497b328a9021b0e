"""An agent's end users as the users API lists them: each with their last activity (their latest session's, or when
they were first seen when they have no session), filterable by it."""

from __future__ import annotations

from datetime import datetime

from django.db.models import DateTimeField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from agents.models import Agent, EndUser
from conversations.models import Session


def end_users_with_activity(
    *, agent: Agent, active_after: datetime | None = None, active_before: datetime | None = None
) -> QuerySet[EndUser]:
    """The agent's users annotated with `last_active_at`; `active_after` keeps those active at or after it,
    `active_before` those not active since it. The latest session is read through the (user, -last_activity_at)
    index, one probe per user."""
    latest = Session.objects.filter(user=OuterRef("pk")).order_by("-last_activity_at").values("last_activity_at")[:1]
    users = EndUser.objects.filter(agent=agent).annotate(
        last_active_at=Coalesce(Subquery(latest, output_field=DateTimeField()), "created_at")
    )
    if active_after is not None:
        users = users.filter(last_active_at__gte=active_after)
    if active_before is not None:
        users = users.filter(last_active_at__lt=active_before)
    return users


def end_user_with_activity(*, agent: Agent, external_id: str) -> EndUser | None:
    return end_users_with_activity(agent=agent).filter(external_id=external_id).first()
