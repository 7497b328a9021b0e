"""rate_memory: pass on what the user says about a remembered fact ("that's wrong, I don't live there any more"): the
feedback API's twin. The conversation's user gives it: their own fact they call wrong or outdated is closed (kept as
history); on memory shared by every user, or written by an operator, it waits for an operator's review
(facts.services.feedback)."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import StrictCharField, StrictIntegerField
from facts.models import FeedbackOutcome, FeedbackRating
from facts.services.feedback import NOTE_MAX_CHARS, fact_feedback_give
from formation.tools.base import Tool, ToolContext, arguments_validate
from formation.tools.guards import content_screened, memory_in_conversation
from formation.tools.update_memory import FACT_ID_HELP

OUTCOME_SAID: dict[str, str] = {
    FeedbackOutcome.RECORDED: "recorded",
    FeedbackOutcome.CLOSED: "the memory is forgotten (kept in its history)",
    FeedbackOutcome.PENDING_REVIEW: "an operator will review it; the memory stays until then",
}


class RateMemoryArguments(serializers.Serializer):
    id = StrictIntegerField(help_text=FACT_ID_HELP)
    rating = serializers.ChoiceField(
        choices=FeedbackRating.choices,
        help_text="useful: it helped; wrong: it never was true; outdated: it was true but is no longer; harmful: it "
        "should not be remembered at all.",
    )
    note = StrictCharField(
        max_length=NOTE_MAX_CHARS, required=False, default="", help_text="What the user said about it, in a few words."
    )


def rate_memory(context: ToolContext, arguments: dict) -> dict:
    options = arguments_validate(RateMemoryArguments, arguments)
    fact = memory_in_conversation(context, options["id"])
    # The note becomes the closed fact's reason when it closes one: memory, screened as what save_memory stores is.
    note = content_screened(context, options["note"], field="note")
    feedback = fact_feedback_give(fact=fact, rating=options["rating"], note=note, user=context.user, via="tool")
    return {
        "id": fact.pk,
        "rating": feedback.rating,
        "outcome": feedback.outcome,
        "note": OUTCOME_SAID[feedback.outcome],
    }


TOOL = Tool(
    name="rate_memory",
    description="Pass on what the user says about a remembered fact: wrong, outdated (no longer true), harmful, or "
    "useful. Use it when the user corrects or rejects something you remembered; save the new fact with save_memory.",
    arguments=RateMemoryArguments,
    run=rate_memory,
)
