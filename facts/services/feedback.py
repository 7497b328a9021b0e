"""Feedback on a fact, from the agent or on behalf of an end user (the feedback API and the rate_memory tool), and an
operator's decision on the feedback that waits for review. What feedback does (docs/decisions/0046):

- `useful`, and anything on a version already closed: recorded (counted in the console).
- `wrong` or `outdated` from a user on their own fact (user scope only, not curated by an operator): the fact is
  closed, kept as history, with the rating and the note as its reason.
- `wrong`, `outdated` or `harmful` on agent-wide memory (every user sees it: one user must not remove it for all) or
  on curated memory (an operator wrote it), and `harmful` on any fact: waits for an operator, who closes the fact or
  dismisses the feedback; a `review.pending` webhook event says so.
- `wrong` or `outdated` from the agent itself on a user's fact: recorded (the agent's key may close the fact itself).

Search does not read feedback: measured, a boost for facts found useful did not help (docs/decisions/0046)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from agents.models import EndUser
from core.exceptions import ApplicationError, ConflictError
from facts.models import NEGATIVE_RATINGS, FactFeedback, FactScope, FeedbackOutcome, FeedbackRating
from facts.models.facts import Fact
from facts.services.facts import fact_close
from webhooks.models import WebhookEventType
from webhooks.services.events import webhook_event_record

NOTE_MAX_CHARS = 1000


def _outcome(*, fact: Fact, rating: str, user: EndUser | None) -> str:
    if rating not in NEGATIVE_RATINGS or fact.valid_to is not None:
        return FeedbackOutcome.RECORDED
    shared_or_curated = FactScope.AGENT in fact.scopes or fact.is_curated
    if rating == FeedbackRating.HARMFUL or shared_or_curated:
        return FeedbackOutcome.PENDING_REVIEW
    if user is not None and fact.user_id == user.pk:
        return FeedbackOutcome.CLOSED
    return FeedbackOutcome.RECORDED


def feedback_event_data(feedback: FactFeedback) -> dict:
    return {
        "agent": feedback.agent.external_id,
        "user": feedback.user.external_id if feedback.user is not None else None,
        "review": {"kind": "fact_feedback", "id": feedback.pk},
        "fact": {"id": feedback.fact_id, "lineage": str(feedback.lineage)},
        "rating": feedback.rating,
        "note": feedback.note,
    }


@transaction.atomic
def fact_feedback_give(*, fact: Fact, rating: str, note: str = "", user: EndUser | None, via: str) -> FactFeedback:
    """Record feedback on a fact version the caller can see (`user`: on whose behalf, who must be able to see it),
    and act on it as the module says. Refused with the field named: a rating not in the list, a note too long."""
    if rating not in FeedbackRating.values:
        raise ApplicationError(
            f"rating must be one of {', '.join(FeedbackRating.values)}.",
            fields={"rating": [f"not one of {', '.join(FeedbackRating.values)}"]},
        )
    if len(note) > NOTE_MAX_CHARS:
        raise ApplicationError(
            f"a note is at most {NOTE_MAX_CHARS} characters.", fields={"note": [f"more than {NOTE_MAX_CHARS}"]}
        )
    outcome = _outcome(fact=fact, rating=rating, user=user)
    feedback = FactFeedback.objects.create(
        agent_id=fact.agent_id,
        fact=fact,
        lineage=fact.lineage,
        user=user,
        rating=rating,
        note=note,
        given_via=via,
        outcome=outcome,
    )
    if outcome == FeedbackOutcome.CLOSED:
        fact_close(fact=fact, reason=(f"reported {rating} by its user" + (f": {note}" if note else ""))[:300])
    elif outcome == FeedbackOutcome.PENDING_REVIEW:
        webhook_event_record(
            agent_id=fact.agent_id,
            event_type=WebhookEventType.REVIEW_PENDING,
            data=lambda: feedback_event_data(feedback),
            user_id=user.pk if user is not None else None,
        )
    return feedback


def _pending(feedback: FactFeedback) -> FactFeedback:
    current = FactFeedback.objects.select_for_update().select_related("fact").get(pk=feedback.pk)
    if current.outcome != FeedbackOutcome.PENDING_REVIEW:
        raise ConflictError(
            f"feedback {feedback.pk} is not waiting for review ({current.get_outcome_display()}).",
            fields={"outcome": [current.outcome]},
        )
    return current


@transaction.atomic
def fact_feedback_accept(*, feedback: FactFeedback, decided_by: str) -> FactFeedback:
    """The operator agrees: the fact's current version (of its lineage) is closed, kept as history."""
    feedback = _pending(feedback)
    current = Fact.objects.filter(lineage=feedback.lineage, valid_to__isnull=True).first()
    if current is not None:
        reason = f"reported {feedback.rating}, closed on review" + (f": {feedback.note}" if feedback.note else "")
        fact_close(fact=current, reason=reason[:300])
    return _decide(feedback, outcome=FeedbackOutcome.ACCEPTED, decided_by=decided_by)


@transaction.atomic
def fact_feedback_dismiss(*, feedback: FactFeedback, decided_by: str) -> FactFeedback:
    """The operator disagrees: the fact stays as it is."""
    return _decide(_pending(feedback), outcome=FeedbackOutcome.DISMISSED, decided_by=decided_by)


def _decide(feedback: FactFeedback, *, outcome: str, decided_by: str) -> FactFeedback:
    feedback.outcome, feedback.decided_by, feedback.decided_at = outcome, decided_by, timezone.now()
    feedback.save(update_fields=["outcome", "decided_by", "decided_at"])
    return feedback
