"""What a tool may store or change, and how it shows a memory: the agent's sensitive-data policy and the injection
rules screen what the assistant saves (as formation screens what it extracts); the assistant sees the agent's memory
and this user's, never changes what an operator curated, and changes agent-wide memory only where the agent lets
users write it freely."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from agents.models import AgentMemoryFromUsers
from core.exceptions import ApplicationError
from core.models import SensitiveDataFinding
from core.safety.injection import injection_finding
from core.safety.sensitive import Finding, SensitiveDataPolicy, SensitiveKind, sensitive_findings
from core.safety.sensitive_screening import statement_screen
from facts.models import Fact, FactScope
from facts.selectors.facts import fact_get
from facts.world_time import WorldTime, world_time_format
from formation.models import HeldMemory
from formation.services.memory_trust import HeldCandidate
from formation.tools.base import ToolContext, ToolError

# HeldMemory.origin of what the tools hold for review or reject.
TOOL_ORIGIN = "assistant_tool"


class Withheld(ToolError):
    """A save refused under the agent's sensitive-data policy; recorded after the call's transaction rolls back."""

    def __init__(self, findings: list[Finding], *, field: str = "content") -> None:
        kinds = ", ".join(dict.fromkeys(SensitiveKind(finding.kind).label for finding in findings))
        super().__init__(
            f"not saved: it holds a secret ({kinds}). Memory never keeps passwords, PINs and codes, keys and "
            "tokens, card or account numbers, government ids, security answers or logins; do not save them, and tell "
            "the user so if asked.",
            fields={field: [f"holds a secret ({kinds})"]},
        )
        self.findings = findings


class Rejected(ToolError):
    """Content that reads as an instruction to the model: recorded as a rejected HeldMemory after the call's
    transaction rolls back."""

    def __init__(self, candidate: HeldCandidate) -> None:
        reason = candidate.detail.split(":")[0]
        super().__init__(
            f"not saved: memory keeps information, never instructions to the assistant ({reason}).",
            fields={"content": [f"reads as an instruction to the assistant ({reason})"]},
        )
        self.candidate = candidate


def content_screened(context: ToolContext, content: str, *, field: str = "content") -> str:
    """The content (or another argument the tool stores, `field`) as the agent's sensitive-data policy lets it be
    stored (redacted), or Withheld."""
    findings = sensitive_findings(content)
    if not findings:
        return content
    if context.agent.sensitive_data == SensitiveDataPolicy.WITHHOLD:
        raise Withheld(findings, field=field)
    screened = statement_screen(agent=context.agent, text=content, target=SensitiveDataFinding.Target.TOOL)
    if screened is None:  # not under the redact policy, which always leaves a text
        raise Withheld(findings, field=field)
    return screened


def content_trusted(context: ToolContext, content: str) -> str:
    """The content, unless it reads as an instruction to the model (Rejected)."""
    finding = injection_finding(content)
    if finding is not None:
        raise Rejected(
            HeldCandidate(
                kind=HeldMemory.Kind.FACT,
                content=content,
                reason=HeldMemory.Reason.INJECTION,
                detail=finding.detail,
            )
        )
    return content


def changeable_by_assistant(context: ToolContext, fact: Fact) -> None:
    """The assistant acts on an end user's words: it never changes what an operator curated, and changes agent-wide
    memory only where the agent lets users write it freely."""
    if fact.is_curated:
        raise ToolError(
            f"memory {fact.pk} was written by an operator; the assistant cannot change or delete it.",
            fields={"id": ["written by an operator"]},
        )
    if FactScope.AGENT in fact.scopes and context.agent.agent_memory_from_users != AgentMemoryFromUsers.OPEN:
        raise ToolError(
            f"memory {fact.pk} is shared by every user of this assistant; only an operator can change or delete it.",
            fields={"id": ["shared by every user: only an operator can change it"]},
        )


def memory_in_conversation(context: ToolContext, fact_id: int) -> Fact:
    """A fact this conversation can see (agent-wide, or the user's own). Others, and other agents' facts, read as
    missing: the model may not change what it cannot see."""
    try:
        fact = fact_get(agent=context.agent, fact_id=fact_id)
    except ApplicationError:
        fact = None
    visible_to = {None, context.user.pk if context.user else None}
    if fact is None or fact.restricted_to_user_id not in visible_to:
        raise ToolError(
            f"there is no memory with id {fact_id}; search_memory gives the ids.", fields={"id": ["no such memory"]}
        )
    return fact


def world_time_shown(world_time: WorldTime) -> dict[str, Any]:
    """When a statement held in the world, as the model is shown it: whether it holds today, and the bounds memory
    knows written as extraction writes them ("2023-05", "~2019", "ended": it ended, when unknown)."""
    shown: dict[str, Any] = {"holds_now": world_time.holds_on(timezone.now().date())}
    if held_from := world_time_format(world_time.start, world_time.start_precision):
        shown["held_from"] = held_from
    if held_until := world_time_format(world_time.end, world_time.end_precision):
        shown["held_until"] = held_until
    return shown


def memory_shown(fact: Fact) -> dict[str, Any]:
    """A memory as the tools show it to the model: `since` is when memory recorded this version; held_from,
    held_until and holds_now when its statement held in the world (world_time_shown); `until` when it expires, if it
    does."""
    shown = {
        "id": fact.pk,
        "content": fact.content,
        "scope": fact.scopes,
        "since": fact.valid_from.date().isoformat(),
    } | world_time_shown(fact.world_time)
    if fact.category:  # what it is about (agents.categories), and what it says there
        shown["category"] = fact.category
        if fact.category_value:
            shown["category_value"] = fact.category_value
    if fact.expires_at is not None:
        shown["until"] = fact.expires_at.isoformat()
    return shown
