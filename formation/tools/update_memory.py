"""update_memory: correct a fact the conversation can see; the old version is closed and kept as history."""

from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from core.api.fields import StrictCharField, StrictIntegerField
from facts.models import FactWriter
from facts.services.curation import fact_revise
from formation.tools.base import Tool, ToolContext, arguments_validate
from formation.tools.guards import (
    changeable_by_assistant,
    content_screened,
    content_trusted,
    memory_in_conversation,
    memory_shown,
)
from formation.tools.save_memory import CONTENT_HELP

FACT_ID_HELP = "The memory's id, as search_memory returned it."
REASON_HELP = "Why, in a few words (kept in the memory's history)."


class UpdateMemoryArguments(serializers.Serializer):
    id = StrictIntegerField(help_text=FACT_ID_HELP)
    content = StrictCharField(max_length=settings.FACT_MAX_CHARS, help_text=CONTENT_HELP)
    reason = StrictCharField(max_length=300, default="corrected by the assistant", help_text=REASON_HELP)


def update_memory(context: ToolContext, arguments: dict) -> dict:
    options = arguments_validate(UpdateMemoryArguments, arguments)
    fact = memory_in_conversation(context, options["id"])
    changeable_by_assistant(context, fact)
    options["content"] = content_trusted(context, content_screened(context, options["content"]))
    successor = fact_revise(
        fact=fact, content=options["content"], reason=options["reason"], written_by=FactWriter.ASSISTANT
    )
    return {"updated": True, "previous_id": fact.pk, "memory": memory_shown(successor)}


TOOL = Tool(
    name="update_memory",
    description="Correct a remembered fact that is no longer true or was wrong. The old version is kept as history.",
    arguments=UpdateMemoryArguments,
    run=update_memory,
)
