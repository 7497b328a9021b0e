"""delete_memory: forget a fact the conversation can see; the fact is closed (kept as history), not destroyed."""

from __future__ import annotations

from rest_framework import serializers

from core.api.fields import StrictCharField, StrictIntegerField
from facts.services.curation import fact_delete
from formation.tools.base import Tool, ToolContext, arguments_validate
from formation.tools.guards import changeable_by_assistant, memory_in_conversation
from formation.tools.update_memory import FACT_ID_HELP, REASON_HELP


class DeleteMemoryArguments(serializers.Serializer):
    id = StrictIntegerField(help_text=FACT_ID_HELP)
    reason = StrictCharField(max_length=300, default="deleted by the assistant", help_text=REASON_HELP)


def delete_memory(context: ToolContext, arguments: dict) -> dict:
    options = arguments_validate(DeleteMemoryArguments, arguments)
    fact = memory_in_conversation(context, options["id"])
    changeable_by_assistant(context, fact)
    fact_delete(fact=fact, reason=options["reason"])
    return {"deleted": True, "id": fact.pk}


TOOL = Tool(
    name="delete_memory",
    description="Forget a remembered fact that is wrong or that the user asked to forget.",
    arguments=DeleteMemoryArguments,
    run=delete_memory,
)
