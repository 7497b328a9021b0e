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

from conversations.models import Agent, EndUser, Session
from conversations.selectors.agent_settings import agent_thresholds
from core.exceptions import ApplicationError
from core.limits import text_cap
from core.llm.client import OutputInvalid, llm_complete_json, prompt_render
from core.llm.output_rules import copies, has_words, holds_a_placeholder
from core.models import JobStatus
from core.sensitive_screening import long_text_screen
from reflections.models import (
    ConsolidatedMemory,
    ConsolidatedMemoryVersion,
    ConsolidationJob,
    MemoryScope,
    Reflection,
)
from reflections.services.reflections import LEVELS, scope_key, scopes_filter

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


def words_cap(*, text: str, limit: int) -> str:
    """Cut to at most `limit` words, keeping line breaks (blobs are bullet lists)."""
    kept: list[str] = []
    remaining = limit
    for line in text.strip().splitlines():
        words = line.split()
        if remaining <= 0:
            break
        if len(words) > remaining:
            line = " ".join(words[:remaining])
        kept.append(line)
        remaining -= len(words)
    return "\n".join(kept)


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
) -> ConsolidatedMemory:
    """Make `content` the scope's blob (capped to its word limit and to BLOB_MAX_CHARS); the previous content becomes
    a past version. With expected_version, refuse if someone changed the blob since it was read (optimistic
    concurrency)."""
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
    content = text_cap(text=words_cap(text=content, limit=word_limit), chars=settings.BLOB_MAX_CHARS)
    summary_fields: dict = {"is_rule_based": is_rule_based}
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


def scope_consolidate(*, key: ScopeKey, task_id: str = "", force: bool = False) -> ConsolidationJob | None:
    """Consolidate one scope if its buffer is due (or `force`; for a session, also when its summary is due by the
    message cadence). The LLM runs outside any transaction; the result is stored only if the blob is unchanged
    since it was read, else the job fails and the reflections stay buffered for the next run. A session summary
    whose LLM call fails is replaced by a rule-based one (reflections stay buffered) before the error is raised."""
    from reflections.services.session_summary import (
        session_summary_due,
        session_summary_rule_based,
        session_summary_window,
    )

    agent = Agent.objects.get(pk=key.agent_id)
    user = EndUser.objects.get(pk=key.user_id) if key.user_id else None
    session = Session.objects.get(pk=key.session_id) if key.session_id else None
    scope_filter = {"user": user, "session": session}
    buffered = list(
        Reflection.objects.filter(agent=agent, scope=key.scope, absorbed=False, **scope_filter).order_by(
            "created_at", "id"
        )[:MAX_REFLECTIONS_PER_RUN]
    )
    thresholds = agent_thresholds(agent=agent)
    memory = ConsolidatedMemory.objects.filter(agent=agent, scope=key.scope, **scope_filter).first()
    is_session = key.scope == MemoryScope.SESSION
    window = session_summary_window(session=session, memory=memory) if is_session else []
    due = len(buffered) >= thresholds.consolidation_threshold(key.scope) or (
        is_session and session_summary_due(session=session)
    )
    if not (buffered or window) or not (due or force):
        return None
    read_version = memory.version if memory else 0
    word_limit = thresholds.blob_word_limit(key.scope)
    through = window[-1].message.pk if window else None
    job = ConsolidationJob.objects.create(
        agent=agent,
        user=user,
        session=session,
        scope=key.scope,
        task_id=task_id,
        reflections_count=len(buffered),
        memory=memory,
    )
    current = memory.content if memory else ""
    conversation = "\n".join(item.as_line() for item in window if item.text)
    try:
        try:
            messages = prompt_render(
                path=PROMPT,
                values={
                    "scope": key.scope,
                    "word_limit": str(word_limit),
                    "current": current or "(empty)",
                    "reflections": "\n".join(f"- {r.content}" for r in buffered) or "(none)",
                    "conversation": conversation or "(none)",
                },
            )
            content = llm_complete_json(
                purpose="consolidate",
                messages=messages,
                inputs={
                    "scope": key.scope,
                    "word_limit": word_limit,
                    "current": current,
                    "reflections": [r.content for r in buffered],
                    "messages": [item.as_input() for item in window if item.text],
                },
                validate=lambda data: _validate(data, instructions=messages[0]["content"]),
                schema=SCHEMA,
                rules=lambda data: {"over_word_limit": int(len(data["content"].split()) > word_limit)},
                speed="slow",
                agent_id=agent.pk,
                job_kind="consolidation",
                job_id=job.pk,
            )
        except Exception:
            if is_session:
                rule_based = session_summary_rule_based(
                    current=current, reflections=buffered, window=window, word_limit=word_limit
                )
                consolidated_memory_replace(
                    agent=agent,
                    scope=key.scope,
                    user=user,
                    session=session,
                    content=long_text_screen(agent=agent, text=rule_based),  # stored now: no job to wait for
                    reason="rule-based summary: the LLM failed",
                    expected_version=read_version,
                    summarized_through_message_id=through,
                    is_rule_based=True,
                )
            raise
        content = long_text_screen(agent=agent, text=content, job_kind="consolidation", job_id=job.pk)
        with transaction.atomic():
            memory = consolidated_memory_replace(
                agent=agent,
                scope=key.scope,
                user=user,
                session=session,
                content=content,
                reason=f"consolidated {len(buffered)} reflections" + (f", {len(window)} messages" if window else ""),
                absorbed=buffered,
                expected_version=read_version,
                summarized_through_message_id=through,
            )
            job.status, job.memory, job.produced_version = JobStatus.SUCCEEDED, memory, memory.version
            job.finished_at = timezone.now()
            job.save(update_fields=["status", "memory", "produced_version", "finished_at"])
    except Exception as error:
        job.status, job.error, job.finished_at = JobStatus.FAILED, f"{type(error).__name__}: {error}", timezone.now()
        job.save(update_fields=["status", "error", "finished_at"])
        raise
    return job
