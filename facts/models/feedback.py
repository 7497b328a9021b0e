"""Feedback on a fact: how a remembered fact served (useful, wrong, outdated, harmful), from the agent or on behalf of
an end user, with what it did: recorded, the fact closed (a user's own fact they said is wrong or outdated), or waiting
for an operator's review (agent-wide or curated memory, and anything harmful). docs/decisions/0046."""

from django.db import models
from django.db.models import Q

from agents.models import Agent, EndUser
from facts.models.facts import Fact


class FeedbackRating(models.TextChoices):
    USEFUL = "useful", "useful"
    WRONG = "wrong", "wrong"
    OUTDATED = "outdated", "outdated"
    HARMFUL = "harmful", "harmful"


NEGATIVE_RATINGS = (FeedbackRating.WRONG, FeedbackRating.OUTDATED, FeedbackRating.HARMFUL)


class FeedbackOutcome(models.TextChoices):
    RECORDED = "recorded", "recorded"
    CLOSED = "closed", "closed the fact"
    PENDING_REVIEW = "pending_review", "waiting for an operator's review"
    ACCEPTED = "accepted", "accepted by an operator: the fact was closed"
    DISMISSED = "dismissed", "dismissed by an operator"


class FactFeedback(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="feedback", help_text="The version rated.")
    lineage = models.UUIDField(db_index=True, help_text="The fact's lineage: feedback counts follow the fact.")
    user = models.ForeignKey(
        EndUser,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        help_text="The end user it was given on behalf of; empty: the agent's own.",
    )
    rating = models.CharField(max_length=10, choices=FeedbackRating.choices)
    note = models.TextField(blank=True)
    given_via = models.CharField(max_length=10, help_text="api or tool.")
    outcome = models.CharField(max_length=16, choices=FeedbackOutcome.choices, default=FeedbackOutcome.RECORDED)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=200, blank=True)

    class Meta:
        verbose_name = "fact feedback"
        verbose_name_plural = "fact feedback"
        indexes = [
            models.Index(
                fields=["agent", "created_at"], condition=Q(outcome="pending_review"), name="factfeedback_pending"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.rating} on fact {self.fact_id}"
