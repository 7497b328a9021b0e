"""Memory as LLM tools: OpenAI-format function definitions of search_memory, get_entity, save_memory, update_memory
and delete_memory, and their execution for one conversation through the same selectors and services as the API.

A tool call never raises for what the model got wrong (bad arguments, an unknown id, a closed fact): it returns
ToolResult(ok=False, error=...) with a message saying what to fix, which goes back to the model as the tool's output."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from rest_framework import serializers

from agents.models import Agent, AgentMemoryFromUsers, EndUser
from conversations.models import Session
from conversations.services.ingestion import end_user_get_or_create
from core.api.fields import StrictCharField, StrictIntegerField, StrictRegexField
from core.api.json_limits import JSONProblem, json_decode, json_unstorable_fields
from core.exceptions import ApplicationError
from core.models import SensitiveDataFinding
from core.safety.injection import injection_finding
from core.safety.sensitive import Finding, SensitiveDataPolicy, SensitiveKind, sensitive_findings
from core.safety.sensitive_screening import sensitive_findings_record, statement_screen
from facts.models import Entity, Fact, FactScope, FactWriter, Relation
from facts.selectors.facts import fact_get
from facts.selectors.graph import entity_facts, entity_find, entity_relations
from facts.selectors.search import facts_search
from facts.services.curation import fact_delete, fact_get_or_create, fact_revise
from formation.models import HeldMemory
from formation.services.memory_trust import HeldCandidate, held_memory_store_one

TOOL_SEARCH_TOP_K_MAX = 20
# What get_entity returns at most, so that one answer about a well-known entity stays a few hundred tokens.
ENTITY_TOOL_MAX_RELATIONS = 25
ENTITY_TOOL_MAX_FACTS = 15
ENTITY_TOOL_MAX_OTHER_MATCHES = 5


@dataclass(frozen=True)
class ToolContext:
    """The conversation a tool call happens in. `user_external_id` is kept for a user not stored yet, whom saving a
    user fact creates."""

    agent: Agent
    user: EndUser | None
    user_external_id: str | None
    session: Session | None


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    result: dict[str, Any] | None = None
    error: str | None = None


class ToolError(Exception):
    """Something the model can fix; the message tells it what."""


class _Withheld(ToolError):
    """A save refused under the agent's sensitive-data policy; recorded after the call's transaction rolls back."""

    def __init__(self, findings: list[Finding]) -> None:
        kinds = ", ".join(dict.fromkeys(SensitiveKind(finding.kind).label for finding in findings))
        super().__init__(
            f"not saved: it holds a secret ({kinds}). Memory never keeps passwords, keys and tokens, card or "
            "account numbers, government ids or one-time codes; do not save them, and tell the user so if asked."
        )
        self.findings = findings


def _function(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


def tool_definitions(*, agent: Agent) -> list[dict]:
    """The tools this agent may use, in OpenAI's `tools` format; search_memory only while its RAG is on."""
    fact_id = {"type": "integer", "description": "The memory's id, as search_memory returned it."}
    reason = {"type": "string", "description": "Why, in a few words (kept in the memory's history)."}
    content = {
        "type": "string",
        "description": f"One self-contained, objective statement of at most {settings.FACT_MAX_WORDS} words, "
        'naming who it is about ("Gene\'s birthday is March 15th", not "it is on the 15th").',
    }
    definitions = [
        _function(
            "save_memory",
            "Remember a fact for future conversations. Save only durable facts worth recalling later, one per call.",
            {
                "content": content,
                "scope": {
                    "type": "string",
                    "enum": [FactScope.USER, FactScope.AGENT],
                    "description": "'user': about or for this user only (default). 'agent': true for every user.",
                },
                "tags": {"type": "array", "items": {"type": "string"}, "description": "Optional labels."},
                "key": {
                    "type": "string",
                    "description": "For a stable attribute of the user with one current value, its profile key in "
                    "snake_case (home_city, employer, preferred_language): replaces the previous value.",
                },
            },
            ["content"],
        ),
        _function(
            "update_memory",
            "Correct a remembered fact that is no longer true or was wrong. The old version is kept as history.",
            {"id": fact_id, "content": content, "reason": reason},
            ["id", "content"],
        ),
        _function(
            "delete_memory",
            "Forget a remembered fact that is wrong or that the user asked to forget.",
            {"id": fact_id, "reason": reason},
            ["id"],
        ),
    ]
    if agent.rag_enabled:
        search = _function(
            "search_memory",
            "Search long-term memory for facts from earlier conversations (about this user, or known to you in "
            "general). Use it when an answer may depend on something you were told before.",
            {
                "query": {"type": "string", "description": "What to look for, as a question or keywords."},
                "top_k": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": TOOL_SEARCH_TOP_K_MAX,
                    "description": "How many memories to return (default 5).",
                },
            },
            ["query"],
        )
        entity = _function(
            "get_entity",
            "What memory knows about someone or something by name (a person, place, organisation, thing or event): "
            "its other names, how it relates to others (who works where, who is whose sister) and the facts that say "
            "so. Use it for 'what do you know about X' and to follow a relation to the next person or place; 'me' "
            "is this user.",
            {
                "name": {"type": "string", "description": "The name, or any name it is known by."},
                "include_ended": {
                    "type": "boolean",
                    "description": "Also the relations that no longer hold, with when they held (default false).",
                },
            },
            ["name"],
        )
        definitions[:0] = [search, entity]
    return definitions


class _SearchArguments(serializers.Serializer):
    query = StrictCharField(max_length=2000)
    top_k = StrictIntegerField(min_value=1, max_value=TOOL_SEARCH_TOP_K_MAX, default=5)


class _EntityArguments(serializers.Serializer):
    name = StrictCharField(max_length=200)
    include_ended = serializers.BooleanField(default=False)

    def validate_include_ended(self, value: object) -> bool:
        # Strict like the other arguments: a model's "yes" or 1 is a mistake to report back, not a guess to make.
        if not isinstance(self.initial_data.get("include_ended", False), bool):
            raise serializers.ValidationError("must be true or false.")
        return bool(value)


class _SaveArguments(serializers.Serializer):
    content = StrictCharField(max_length=settings.FACT_MAX_CHARS)
    scope = serializers.ChoiceField(choices=[FactScope.USER, FactScope.AGENT], default=FactScope.USER)
    tags = serializers.ListField(child=StrictCharField(max_length=100), max_length=20, default=list)
    key = StrictRegexField(r"^[a-z][a-z0-9_]{0,99}$", required=False, default="")


class _UpdateArguments(serializers.Serializer):
    id = StrictIntegerField()
    content = StrictCharField(max_length=settings.FACT_MAX_CHARS)
    reason = StrictCharField(max_length=300, default="corrected by the assistant")


class _DeleteArguments(serializers.Serializer):
    id = StrictIntegerField()
    reason = StrictCharField(max_length=300, default="deleted by the assistant")


class _Rejected(ToolError):
    """Content that reads as an instruction to the model: recorded as a rejected HeldMemory after the call's
    transaction rolls back."""

    def __init__(self, candidate: HeldCandidate) -> None:
        super().__init__(
            "not saved: memory keeps information, never instructions to the assistant "
            f"({candidate.detail.split(':')[0]})."
        )
        self.candidate = candidate


TOOL_ORIGIN = "assistant_tool"


def _content_trusted(context: ToolContext, content: str) -> str:
    finding = injection_finding(content)
    if finding is not None:
        raise _Rejected(
            HeldCandidate(
                kind=HeldMemory.Kind.FACT,
                content=content,
                reason=HeldMemory.Reason.INJECTION,
                detail=finding.detail,
            )
        )
    return content


def _changeable_by_assistant(context: ToolContext, fact: Fact) -> None:
    """The assistant acts on an end user's words: it never changes what an operator curated, and changes agent-wide
    memory only where the agent lets users write it freely."""
    if fact.is_curated:
        raise ToolError(f"memory {fact.pk} was written by an operator; the assistant cannot change or delete it.")
    if FactScope.AGENT in fact.scopes and context.agent.agent_memory_from_users != AgentMemoryFromUsers.OPEN:
        raise ToolError(
            f"memory {fact.pk} is shared by every user of this assistant; only an operator can change or delete it."
        )


def _arguments_validate(serializer_class: type[serializers.Serializer], arguments: dict) -> dict:
    unknown = sorted(set(arguments) - set(serializer_class().fields))
    if unknown:
        raise ToolError(f"unknown argument(s): {', '.join(unknown)}.")
    data = serializer_class(data=arguments)
    if not data.is_valid():
        problems = "; ".join(f"{field}: {' '.join(map(str, errors))}" for field, errors in data.errors.items())
        raise ToolError(f"invalid arguments: {problems}")
    return data.validated_data


def _memory_in_conversation(context: ToolContext, fact_id: int) -> Fact:
    """A fact this conversation can see (agent-wide, or the user's own). Others, and other agents' facts, read as
    missing: the model may not change what it cannot see."""
    try:
        fact = fact_get(agent=context.agent, fact_id=fact_id)
    except ApplicationError:
        fact = None
    visible_to = {None, context.user.pk if context.user else None}
    if fact is None or fact.restricted_to_user_id not in visible_to:
        raise ToolError(f"there is no memory with id {fact_id}; search_memory gives the ids.")
    return fact


def _memory(fact: Fact) -> dict[str, Any]:
    return {"id": fact.pk, "content": fact.content, "scope": fact.scopes, "since": fact.valid_from.date().isoformat()}


def _search_memory(context: ToolContext, arguments: dict) -> dict:
    if not context.agent.rag_enabled:
        raise ToolError("memory search is switched off for this assistant; answer without it.")
    options = _arguments_validate(_SearchArguments, arguments)
    hits = facts_search(agent=context.agent, user=context.user, query=options["query"], top_k=options["top_k"])
    return {"memories": [_memory(hit.fact) | {"score": round(hit.score, 3)} for hit in hits]}


def _relation(relation: Relation, *, ended: bool) -> dict[str, Any]:
    stated = {
        "subject": relation.subject.name,
        "predicate": relation.predicate,
        "object": relation.object_entity.name if relation.object_entity is not None else relation.object_value,
        "since": relation.valid_from.date().isoformat(),
    }
    if ended and relation.valid_to is not None:
        stated |= {"until": relation.valid_to.date().isoformat(), "why_ended": relation.closed_reason}
    return stated


def _get_entity(context: ToolContext, arguments: dict) -> dict:
    if not context.agent.rag_enabled:
        raise ToolError("memory search is switched off for this assistant; answer without it.")
    options = _arguments_validate(_EntityArguments, arguments)
    matches = entity_find(
        agent=context.agent, user=context.user, name=options["name"], limit=1 + ENTITY_TOOL_MAX_OTHER_MATCHES
    )
    if not matches:
        return {"found": False, "note": "memory knows no one and nothing by that name; try search_memory."}
    entity: Entity = matches[0]
    relations = entity_relations(entity=entity)
    current = relations.filter(valid_to__isnull=True)
    ended = relations.filter(valid_to__isnull=False) if options["include_ended"] else relations.none()
    visible = Q(scopes__contains=[FactScope.AGENT])
    if context.user is not None:
        visible |= Q(user=context.user)
    facts = entity_facts(entity=entity).filter(visible)
    if not options["include_ended"]:
        facts = facts.filter(valid_to__isnull=True)
    answer: dict[str, Any] = {
        "found": True,
        "entity": {
            "name": entity.name,
            "type": entity.entity_type,
            "aliases": [alias for alias in entity.aliases if alias != entity.name.lower()],
            "is_this_user": entity.is_user,
        },
        "relations": [_relation(relation, ended=False) for relation in current[:ENTITY_TOOL_MAX_RELATIONS]],
        "facts": [
            _memory(fact) | ({} if fact.valid_to is None else {"until": fact.valid_to.date().isoformat()})
            for fact in facts[:ENTITY_TOOL_MAX_FACTS]
        ],
    }
    if options["include_ended"]:
        answer["ended_relations"] = [_relation(relation, ended=True) for relation in ended[:ENTITY_TOOL_MAX_RELATIONS]]
    left_out = {
        "relations": max(0, current.count() - ENTITY_TOOL_MAX_RELATIONS),
        "ended_relations": max(0, ended.count() - ENTITY_TOOL_MAX_RELATIONS),
        "facts": max(0, facts.count() - ENTITY_TOOL_MAX_FACTS),
    }
    if any(left_out.values()):
        answer["left_out"] = {name: count for name, count in left_out.items() if count}
    if len(matches) > 1:
        answer["other_matches"] = [other.name for other in matches[1:]]
    return answer


def _content_screened(context: ToolContext, content: str) -> str:
    """The content as the agent's sensitive-data policy lets it be stored (redacted), or _Withheld."""
    findings = sensitive_findings(content)
    if not findings:
        return content
    if context.agent.sensitive_data == SensitiveDataPolicy.WITHHOLD:
        raise _Withheld(findings)
    screened = statement_screen(agent=context.agent, text=content, target=SensitiveDataFinding.Target.TOOL)
    if screened is None:  # not under the redact policy, which always leaves a text
        raise _Withheld(findings)
    return screened


def _save_memory(context: ToolContext, arguments: dict) -> dict:
    options = _arguments_validate(_SaveArguments, arguments)
    options["content"] = _content_trusted(context, _content_screened(context, options["content"]))
    policy = context.agent.agent_memory_from_users
    if options["scope"] == FactScope.AGENT and policy == AgentMemoryFromUsers.REVIEW:
        held = held_memory_store_one(
            agent=context.agent,
            user=context.user,
            session=context.session,
            candidate=HeldCandidate(
                kind=HeldMemory.Kind.FACT,
                content=options["content"],
                reason=HeldMemory.Reason.AGENT_SCOPE_FROM_USER,
                detail="saved by the assistant with scope 'agent' (agent_memory_from_users = review)",
            ),
            origin=TOOL_ORIGIN,
        )
        return {
            "saved": False,
            "held_for_review": True,
            "review_id": held.pk,
            "note": "memory shared by every user is stored once an operator approves it.",
        }
    if options["scope"] == FactScope.AGENT and policy == AgentMemoryFromUsers.USER_SCOPE:
        if not context.user_external_id:
            raise ToolError("this assistant keeps memory from conversations per user, and this one has no user.")
        options["scope"] = FactScope.USER
    user = None
    if options["scope"] == FactScope.USER:
        if not context.user_external_id:
            raise ToolError("this conversation has no user: save with scope 'agent', or not at all.")
        user = context.user or end_user_get_or_create(agent=context.agent, external_id=context.user_external_id)
    fact, created = fact_get_or_create(
        agent=context.agent,
        user=user,
        scopes=[options["scope"]],
        content=options["content"],
        tags=options["tags"],
        source_session=context.session,
        change_reason="saved by the assistant",
        key=options["key"],
        written_by=FactWriter.ASSISTANT,
    )
    return {"saved": created, "already_known": not created, "memory": _memory(fact)}


def _update_memory(context: ToolContext, arguments: dict) -> dict:
    options = _arguments_validate(_UpdateArguments, arguments)
    fact = _memory_in_conversation(context, options["id"])
    _changeable_by_assistant(context, fact)
    options["content"] = _content_trusted(context, _content_screened(context, options["content"]))
    successor = fact_revise(
        fact=fact, content=options["content"], reason=options["reason"], written_by=FactWriter.ASSISTANT
    )
    return {"updated": True, "previous_id": fact.pk, "memory": _memory(successor)}


def _delete_memory(context: ToolContext, arguments: dict) -> dict:
    options = _arguments_validate(_DeleteArguments, arguments)
    fact = _memory_in_conversation(context, options["id"])
    _changeable_by_assistant(context, fact)
    fact_delete(fact=fact, reason=options["reason"])
    return {"deleted": True, "id": fact.pk}


TOOLS: dict[str, Callable[[ToolContext, dict], dict]] = {
    "search_memory": _search_memory,
    "get_entity": _get_entity,
    "save_memory": _save_memory,
    "update_memory": _update_memory,
    "delete_memory": _delete_memory,
}


def _arguments_decode(arguments: dict | str) -> dict:
    """Models send `arguments` as a JSON string (OpenAI's format); clients may pass the object itself. A string is
    decoded under the API body's limits (nesting, numbers, storable text)."""
    if isinstance(arguments, str):
        try:
            arguments = json_decode(arguments) if arguments.strip() else {}
        except JSONProblem as problem:
            detail = "; ".join(f"{path or 'arguments'}: {' '.join(errors)}" for path, errors in problem.fields.items())
            raise ToolError(f"arguments are not valid JSON ({detail})") from problem
        if problems := json_unstorable_fields(arguments):
            detail = "; ".join(f"{path}: {' '.join(errors)}" for path, errors in problems.items())
            raise ToolError(f"arguments cannot be stored ({detail})")
    if not isinstance(arguments, dict):
        raise ToolError("arguments must be a JSON object of named parameters.")
    return arguments


def tool_call_execute(*, context: ToolContext, name: str, arguments: dict | str) -> ToolResult:
    """Run one tool call in one transaction."""
    tool = TOOLS.get(name)
    if tool is None:
        return ToolResult(ok=False, error=f"unknown tool {name!r}; the tools are {', '.join(TOOLS)}.")
    try:
        with transaction.atomic():  # a refused call leaves nothing behind, not even a new end user
            result = tool(context, _arguments_decode(arguments))
    except _Withheld as withheld:
        sensitive_findings_record(
            agent=context.agent,
            findings=withheld.findings,
            action=SensitiveDataFinding.Action.WITHHELD,
            target=SensitiveDataFinding.Target.TOOL,
        )
        return ToolResult(ok=False, error=str(withheld))
    except _Rejected as rejected:
        held_memory_store_one(
            agent=context.agent,
            user=context.user,
            session=context.session,
            candidate=rejected.candidate,
            origin=TOOL_ORIGIN,
        )
        return ToolResult(ok=False, error=str(rejected))
    except ToolError as error:
        return ToolResult(ok=False, error=str(error))
    except ApplicationError as error:
        return ToolResult(ok=False, error=error.message)
    return ToolResult(ok=True, result=result)
