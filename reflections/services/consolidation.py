"""Formation step 5: when a scope's buffer reaches its threshold, one LLM call merges the current blob and the
buffered reflections into a new blob within the word limit. The old blob stays as a version, and reflections are
marked absorbed only in the transaction that stores the new blob: a failed consolidation loses nothing."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from agents.models import Agent, EndUser
from agents.selectors.agent_settings import agent_thresholds
from conversations.models import Session
from core.exceptions import ApplicationError
from core.llm.client import OutputInvalid, llm_complete_json, prompt_render
from core.llm.limits import text_cap, words_cap
from core.models import JobStatus
from core.runtime.request_load import cpu_work_admitted
from core.safety.injection import injection_lines_drop
from core.safety.sensitive_screening import long_text_screen
from facts.grammar.output_rules import copies, has_words, holds_a_placeholder
from reflections.models import (
    ConsolidatedMemory,
    ConsolidatedMemoryVersion,
    ConsolidationJob,
    MemoryScope,
    Reflection,
)
from reflections.services.reflections import LEVELS, scope_key, scopes_filter
from reflections.services.session_summary import (
    session_summary_due,
    session_summary_rule_based,
    session_summary_window,
)

logger = logging.getLogger(__name__)

PROMPT = Path(__file__).resolve().parent.parent / "prompts" / "consolidate.txt"
MAX_REFLECTIONS_PER_RUN = 100


@dataclass(frozen=True)
class ScopeKey:
    agent_id: int
    scope: str
    user_id: int | None
    session_id: int | None

    def as_task_args(self) -> list:
        return [self.agent_id, self.scope, self.user_id, self.session_id]

    @classmethod
    def of(cls, row: Reflection | ConsolidationJob | ConsolidatedMemory) -> ScopeKey:
        """The scope a reflection, a blob or a consolidation job belongs to."""
        return cls(agent_id=row.agent_id, scope=row.scope, user_id=row.user_id, session_id=row.session_id)


@transaction.atomic
def consolidated_memory_replace(
    *,
    agent: Agent,
    scope: str,
    user: EndUser | None,
    session: Session | None,
    content: str,
    reason: str,
    absorbed: Sequence[Reflection] = (),
    expected_version: int | None = None,
    summarized_through_message_id: int | None = None,
    is_rule_based: bool = False,
    curated: bool = False,
) -> ConsolidatedMemory:
    """Make `content` the scope's blob (capped to its word limit and to BLOB_MAX_CHARS); the previous content becomes
    a past version. With expected_version, refuse if someone changed the blob since it was read (optimistic
    concurrency).

    `curated`: an operator wrote `content` (the admin, the API key): all of it becomes the blob's curated part. A
    write that is not curated (consolidation, an import) gives only the part after the curated one, which stays word
    for word at the top: formation never rewrites what an operator wrote."""
    if scope not in MemoryScope.values:
        raise ApplicationError("scope must be agent, user or session.", fields={"scope": ["invalid"]})
    key = scope_key(scope=scope, user=user, session=session)
    word_limit = agent_thresholds(agent=agent).blob_word_limit(scope)
    now = timezone.now()
    memory = ConsolidatedMemory.objects.select_for_update().filter(agent=agent, scope=scope, **key).first()
    current_version = memory.version if memory else 0
    if expected_version is not None and expected_version != current_version:
        raise ApplicationError(
            f"the blob changed meanwhile (version {current_version}, expected {expected_version}).",
            code="conflict",
            fields={"version": ["stale"]},
        )
    curated_content = memory.curated_content if memory else ""
    if curated:
        content = text_cap(text=words_cap(text=content, limit=word_limit), chars=settings.BLOB_MAX_CHARS)
        curated_content = content
    else:
        content = blob_with_curated_part(curated_content=curated_content, formed=content, word_limit=word_limit)
    summary_fields: dict = {"is_rule_based": is_rule_based, "curated_content": curated_content}
    if summarized_through_message_id is not None:
        summary_fields["summarized_through_message_id"] = summarized_through_message_id
    if memory is None:
        memory = ConsolidatedMemory.objects.create(
            agent=agent,
            scope=scope,
            content=content,
            word_limit=word_limit,
            version=1,
            change_reason=reason,
            last_consolidated_at=now,
            **key,
            **summary_fields,
        )
    else:
        ConsolidatedMemoryVersion.objects.create(
            memory=memory,
            version=memory.version,
            content=memory.content,
            curated_content=memory.curated_content,
            word_limit=memory.word_limit,
            change_reason=memory.change_reason,
            created_at=memory.last_consolidated_at or memory.updated_at,
        )
        memory.content, memory.word_limit, memory.change_reason = content, word_limit, reason
        memory.version += 1
        memory.last_consolidated_at = now
        for name, value in summary_fields.items():
            setattr(memory, name, value)
        memory.save(
            update_fields=[
                "content",
                "word_limit",
                "change_reason",
                "version",
                "last_consolidated_at",
                "updated_at",
                *summary_fields,
            ]
        )
    if absorbed:
        Reflection.objects.filter(pk__in=[r.pk for r in absorbed], absorbed=False).update(
            absorbed=True, absorbed_at=now, consolidated_into=memory, consolidated_into_version=memory.version
        )
    return memory


def blob_with_curated_part(*, curated_content: str, formed: str, word_limit: int) -> str:
    """The blob's text: the curated part word for word, then the formed part within the words left of the limit."""
    curated_words = len(curated_content.split())
    formed = words_cap(text=formed, limit=max(word_limit - curated_words, 0)) if formed.strip() else ""
    text = "\n".join(part for part in (curated_content.strip(), formed) if part)
    return text_cap(text=text, chars=settings.BLOB_MAX_CHARS)


def blob_formed_part(memory: ConsolidatedMemory | None) -> str:
    """What formation wrote of a blob: its text after the curated part."""
    if memory is None:
        return ""
    curated = memory.curated_content.strip()
    content = memory.content.strip()
    if curated and content.startswith(curated):
        return content[len(curated) :].strip()
    return "" if curated else content


def consolidation_due_scopes(*, session: Session) -> list[ScopeKey]:
    """The scopes touched by this session whose unabsorbed reflections reached the agent's threshold."""
    thresholds = agent_thresholds(agent=session.agent)
    keys = {scope: scope_key(scope=scope, user=session.user, session=session) for scope in LEVELS}
    buffered = dict(
        Reflection.objects.filter(
            scopes_filter(user=session.user, session=session), agent=session.agent, absorbed=False
        )
        .order_by()
        .values("scope")
        .annotate(n=Count("id"))
        .values_list("scope", "n")
    )
    due = []
    for scope, key in keys.items():
        if buffered.get(scope, 0) >= thresholds.consolidation_threshold(scope):
            due.append(
                ScopeKey(
                    agent_id=session.agent_id,
                    scope=scope,
                    user_id=key["user"].pk if key["user"] else None,
                    session_id=key["session"].pk if key["session"] else None,
                )
            )
    return due


SCHEMA = {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]}


def _validate(data: object, *, instructions: str) -> str:
    if not isinstance(data, dict) or not isinstance(data.get("content"), str) or not has_words(data["content"]):
        raise OutputInvalid('expected an object {"content": "<the updated note>"}')
    if copies(statement=data["content"], text=instructions) or holds_a_placeholder(
        statement=data["content"], instructions=instructions
    ):
        raise OutputInvalid("the content repeats the instructions; write the updated note itself")
    return data["content"].strip()


@dataclass
class _ScopeToConsolidate:
    """One scope as consolidation reads it, before any LLM call."""

    key: ScopeKey
    agent: Agent
    user: EndUser | None
    session: Session | None
    memory: ConsolidatedMemory | None
    buffered: list[Reflection]
    window: list  # the session's messages its summary has not covered (sessions only)
    due: bool

    @property
    def is_session(self) -> bool:
        return self.key.scope == MemoryScope.SESSION

    @property
    def through(self) -> int | None:
        return self.window[-1].message.pk if self.window else None

    @property
    def curated(self) -> str:
        return self.memory.curated_content.strip() if self.memory else ""

    def formed_word_limit(self) -> int:
        """The words the curated part leaves of the scope's limit for the formed part."""
        limit = agent_thresholds(agent=self.agent).blob_word_limit(self.key.scope)
        return max(limit - len(self.curated.split()), 0)


def _scope_read(key: ScopeKey) -> _ScopeToConsolidate:
    agent = Agent.objects.get(pk=key.agent_id)
    user = EndUser.objects.get(pk=key.user_id) if key.user_id else None
    session = Session.objects.get(pk=key.session_id) if key.session_id else None
    scope_filter = {"user": user, "session": session}
    buffered = list(
        Reflection.objects.filter(agent=agent, scope=key.scope, absorbed=False, **scope_filter).order_by(
            "created_at", "id"
        )[:MAX_REFLECTIONS_PER_RUN]
    )
    memory = ConsolidatedMemory.objects.filter(agent=agent, scope=key.scope, **scope_filter).first()
    is_session = key.scope == MemoryScope.SESSION
    due = len(buffered) >= agent_thresholds(agent=agent).consolidation_threshold(key.scope) or (
        session is not None and is_session and session_summary_due(session=session)
    )
    return _ScopeToConsolidate(
        key=key,
        agent=agent,
        user=user,
        session=session,
        memory=memory,
        buffered=buffered,
        window=session_summary_window(session=session, memory=memory) if session is not None and is_session else [],
        due=due,
    )


def _consolidated_text_ask(*, scope: _ScopeToConsolidate, job: ConsolidationJob) -> str:
    """The LLM's new formed part of the blob (the curated part is shown as fixed, never asked for)."""
    current, curated, word_limit = blob_formed_part(scope.memory), scope.curated, scope.formed_word_limit()
    conversation = "\n".join(item.as_line() for item in scope.window if item.text)
    messages = prompt_render(
        path=PROMPT,
        values={
            "scope": scope.key.scope,
            "word_limit": str(word_limit),
            "current": current or "(empty)",
            "curated": curated or "(none)",
            "reflections": "\n".join(f"- {r.content}" for r in scope.buffered) or "(none)",
            "conversation": conversation or "(none)",
        },
    )
    return llm_complete_json(
        purpose="consolidate",
        messages=messages,
        inputs={
            "scope": scope.key.scope,
            "word_limit": word_limit,
            "current": current,
            "curated": curated,
            "reflections": [r.content for r in scope.buffered],
            "messages": [item.as_input() for item in scope.window if item.text],
        },
        validate=lambda data: _validate(data, instructions=messages[0]["content"]),
        schema=SCHEMA,
        rules=lambda data: {"over_word_limit": int(len(data["content"].split()) > word_limit)},
        speed="slow",
        agent_id=scope.agent.pk,
        job_kind="consolidation",
        job_id=job.pk,
    )


def _stored_given(scope: _ScopeToConsolidate) -> str:
    """The stored memory a consolidation rewrites: a secret's label in it was counted when it was stored."""
    return "\n".join([scope.memory.content if scope.memory else "", *(r.content for r in scope.buffered)])


def _rule_based_summary_store(*, scope: _ScopeToConsolidate, read_version: int) -> None:
    """The LLM failed on a session's summary: a rule-based one is stored now (no job waits for it), the reflections
    stay buffered for the next run."""
    rule_based = session_summary_rule_based(
        current=blob_formed_part(scope.memory),
        reflections=scope.buffered,
        window=scope.window,
        word_limit=scope.formed_word_limit(),
    )
    consolidated_memory_replace(
        agent=scope.agent,
        scope=scope.key.scope,
        user=scope.user,
        session=scope.session,
        content=injection_lines_drop(long_text_screen(agent=scope.agent, text=rule_based, given=_stored_given(scope))),
        reason="rule-based summary: the LLM failed",
        expected_version=read_version,
        summarized_through_message_id=scope.through,
        is_rule_based=True,
    )


def scope_consolidate(*, key: ScopeKey, task_id: str = "", force: bool = False) -> ConsolidationJob | None:
    """Consolidate one scope if its buffer is due (or `force`; for a session, also when its summary is due by the
    message cadence). The LLM runs outside any transaction; the result is stored only if the blob is unchanged
    since it was read, else the job fails and the reflections stay buffered for the next run. A session summary
    whose LLM call fails is replaced by a rule-based one (reflections stay buffered) before the error is raised.
    Its CPU work gives way to requests (core.runtime.request_load), its LLM call does not hold a slot."""
    with cpu_work_admitted():
        return _scope_consolidate(key=key, task_id=task_id, force=force)


def _scope_consolidate(*, key: ScopeKey, task_id: str, force: bool) -> ConsolidationJob | None:
    scope = _scope_read(key)
    if not (scope.buffered or scope.window) or not (scope.due or force):
        return None
    read_version = scope.memory.version if scope.memory else 0
    job = ConsolidationJob.objects.create(
        agent=scope.agent,
        user=scope.user,
        session=scope.session,
        scope=key.scope,
        task_id=task_id,
        reflections_count=len(scope.buffered),
        memory=scope.memory,
    )
    try:
        try:
            content = _consolidated_text_ask(scope=scope, job=job)
        except Exception:
            if scope.is_session:
                _rule_based_summary_store(scope=scope, read_version=read_version)
            raise
        content = long_text_screen(
            agent=scope.agent, text=content, job_kind="consolidation", job_id=job.pk, given=_stored_given(scope)
        )
        content = injection_lines_drop(content)
        window = scope.window
        with transaction.atomic():
            memory = consolidated_memory_replace(
                agent=scope.agent,
                scope=key.scope,
                user=scope.user,
                session=scope.session,
                content=content,
                reason=f"consolidated {len(scope.buffered)} reflections"
                + (f", {len(window)} messages" if window else ""),
                absorbed=scope.buffered,
                expected_version=read_version,
                summarized_through_message_id=scope.through,
            )
            job.status, job.memory, job.produced_version = JobStatus.SUCCEEDED, memory, memory.version
            job.finished_at = timezone.now()
            job.save(update_fields=["status", "memory", "produced_version", "finished_at"])
    except Exception as error:
        job.status, job.error, job.finished_at = JobStatus.FAILED, f"{type(error).__name__}: {error}", timezone.now()
        job.save(update_fields=["status", "error", "finished_at"])
        raise
    return job
