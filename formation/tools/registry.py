"""The memory tools, their OpenAI-format definitions for an agent, and the execution of one call in one transaction."""

from __future__ import annotations

from django.db import transaction

from agents.models import Agent
from core.api.json_limits import JSONProblem, json_decode, json_unstorable_fields
from core.exceptions import ApplicationError
from core.models import SensitiveDataFinding
from core.safety.sensitive_screening import sensitive_findings_record
from formation.services.memory_trust import held_memory_store_one
from formation.tools import (
    delete_memory,
    get_entity,
    get_profile,
    rate_memory,
    save_memory,
    search_memory,
    update_memory,
)
from formation.tools.base import Tool, ToolContext, ToolError, ToolResult
from formation.tools.guards import TOOL_ORIGIN, Rejected, Withheld

TOOLS: dict[str, Tool] = {
    module.TOOL.name: module.TOOL
    for module in (search_memory, get_entity, get_profile, save_memory, update_memory, delete_memory, rate_memory)
}


def tool_definitions(*, agent: Agent) -> list[dict]:
    """The tools this agent may use, in OpenAI's `tools` format; search_memory, get_entity and get_profile only while
    its RAG is on."""
    return [tool.definition() for tool in TOOLS.values() if agent.rag_enabled or not tool.reads_memory]


def _arguments_decode(arguments: dict | str) -> dict:
    """Models send `arguments` as a JSON string (OpenAI's format); clients may pass the object itself. A string is
    decoded under the API body's limits (nesting, numbers, storable text)."""
    if isinstance(arguments, str):
        try:
            arguments = json_decode(arguments) if arguments.strip() else {}
        except JSONProblem as problem:
            fields = _inside_arguments(problem.fields)
            detail = "; ".join(f"{path}: {' '.join(errors)}" for path, errors in fields.items())
            raise ToolError(f"arguments are not valid JSON ({detail})", fields=fields) from problem
        if problems := json_unstorable_fields(arguments):
            fields = _inside_arguments(problems)
            detail = "; ".join(f"{path}: {' '.join(errors)}" for path, errors in fields.items())
            raise ToolError(f"arguments cannot be stored ({detail})", fields=fields)
    if not isinstance(arguments, dict):
        raise ToolError("arguments must be a JSON object of named parameters.", fields={"arguments": ["not an object"]})
    return arguments


def _inside_arguments(problems: dict[str, list[str]]) -> dict[str, list[str]]:
    """Problems at paths inside the arguments' JSON text, by their path from `arguments`."""
    return {
        f"arguments.{path}" if path not in ("", "non_field_errors") else "arguments": errors
        for path, errors in problems.items()
    }


def _run(*, tool: Tool, context: ToolContext, arguments: dict | str) -> dict:
    decoded = _arguments_decode(arguments)
    if tool.reads_memory and not context.agent.rag_enabled:
        raise ToolError(
            "memory search is switched off for this assistant; answer without it.",
            fields={"name": ["switched off for this assistant"]},
        )
    return tool.run(context, decoded)


def tool_call_execute(*, context: ToolContext, name: str, arguments: dict | str) -> ToolResult:
    """Run one tool call in one transaction."""
    tool = TOOLS.get(name)
    if tool is None:
        return ToolResult(
            ok=False,
            error=f"unknown tool {name!r}; the tools are {', '.join(TOOLS)}.",
            fields={"name": ["unknown tool"]},
        )
    try:
        with transaction.atomic():  # a refused call leaves nothing behind, not even a new end user
            result = _run(tool=tool, context=context, arguments=arguments)
    except Withheld as withheld:
        sensitive_findings_record(
            agent=context.agent,
            findings=withheld.findings,
            action=SensitiveDataFinding.Action.WITHHELD,
            target=SensitiveDataFinding.Target.TOOL,
        )
        return ToolResult(ok=False, error=str(withheld), fields=withheld.fields)
    except Rejected as rejected:
        held_memory_store_one(
            agent=context.agent,
            user=context.user,
            session=context.session,
            candidate=rejected.candidate,
            origin=TOOL_ORIGIN,
        )
        return ToolResult(ok=False, error=str(rejected), fields=rejected.fields)
    except ToolError as error:
        return ToolResult(ok=False, error=str(error), fields=error.fields)
    except ApplicationError as error:
        return ToolResult(ok=False, error=error.message, fields=error.fields)
    return ToolResult(ok=True, result=result)
