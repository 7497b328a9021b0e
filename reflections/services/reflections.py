"""Formation step 4: reflections for agent, user and session, each level only what the levels above do not say."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, Window
from django.db.models.functions import RowNumber

from agents.models import Agent, EndUser
from conversations.models import Session
from conversations.services.conversation_text import NumberedMessage, conversation_render, injected_memory_text
from core.exceptions import ApplicationError
from core.llm.client import OutputInvalid, llm_complete_json, prompt_render
from core.llm.limits import text_cap
from core.models import SensitiveDataFinding
from core.safety.sensitive_screening import statement_screen
from facts.grammar.output_rules import content_words, has_words, is_question, restates, word_count
from reflections.models import ConsolidatedMemory, MemoryScope, Reflection
from reflections.services.context_cache import context_cache_invalidate

PROMPT = Path(__file__).resolve().parent.parent / "prompts" / "reflect.txt"
LEVELS = (MemoryScope.AGENT, MemoryScope.USER, MemoryScope.SESSION)
REFLECTIONS_IN_PROMPT = 50  # per scope, oldest first
_NOTES = {"type": "array", "items": {"type": "string"}, "maxItems": 10}
SCHEMA = {
    "type": "object",
    "properties": {"agent": _NOTES, "user": _NOTES, "session": _NOTES},
    "required": ["agent", "user", "session"],
}


@dataclass
class ReflectionDrafts:
    agent: list[str] = field(default_factory=list)
    user: list[str] = field(default_factory=list)
    session: list[str] = field(default_factory=list)

    def count(self) -> int:
        return len(self.agent) + len(self.user) + len(self.session)


def _normalised(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


def _validate(data: object) -> ReflectionDrafts:
    if not isinstance(data, dict):
        raise OutputInvalid('expected an object {"agent": [...], "user": [...], "session": [...]}')
    drafts = ReflectionDrafts()
    said: set[str] = set()
    for level in LEVELS:
        notes = data.get(level, [])
        if not isinstance(notes, list) or not all(isinstance(note, str) for note in notes):
            raise OutputInvalid(f"'{level}' must be a list of strings")
        for note in notes:
            note = " ".join(note.split())
            words = note.split()
            if not has_words(note) or _normalised(note) in said:
                continue  # a placeholder ("...") says nothing; a lower level repeating a higher one adds nothing
            if len(words) > settings.REFLECTION_MAX_WORDS or len(note) > settings.REFLECTION_MAX_CHARS:
                note = text_cap(
                    text=" ".join(words[: settings.REFLECTION_MAX_WORDS]), chars=settings.REFLECTION_MAX_CHARS - 1
                )
                note = note.rstrip(",;:") + "…"
            said.add(_normalised(note))
            getattr(drafts, level).append(note)
    return drafts


def _rule_violations(data: dict, *, memory_words: set[str]) -> dict[str, int]:
    """The prompt's rules each note of a valid reply broke: no words at all (a placeholder: dropped), over the word
    limit (cut), a question, the current memory said again, a note repeated at a lower level (dropped)."""
    counts = {"empty": 0, "over_word_limit": 0, "question": 0, "injected_memory": 0, "repeated_across_levels": 0}
    said: set[str] = set()
    for level in LEVELS:
        for note in data.get(level, []):
            counts["empty"] += not has_words(note)
            counts["over_word_limit"] += word_count(note) > settings.REFLECTION_MAX_WORDS
            counts["question"] += is_question(note)
            counts["injected_memory"] += restates(statement=note, source_words=memory_words)
            counts["repeated_across_levels"] += _normalised(note) in said
            said.add(_normalised(note))
    return counts


def scope_key(*, scope: str, user: EndUser | None, session: Session | None) -> dict:
    """The (user, session) a scope is keyed by: agent → neither, user → user, session → both."""
    return {
        "user": user if scope in (MemoryScope.USER, MemoryScope.SESSION) else None,
        "session": session if scope == MemoryScope.SESSION else None,
    }


def scopes_filter(*, user: EndUser | None, session: Session | None) -> Q:
    """Rows of any of the three scopes a session touches (for one agent), to read them in one query."""
    in_scopes = Q()
    for scope in LEVELS:
        in_scopes |= Q(scope=scope, **scope_key(scope=scope, user=user, session=session))
    return in_scopes


def memory_text_for_prompt(*, agent: Agent, user: EndUser, session: Session) -> str:
    """The current memory of the three scopes, as the reflection step must not repeat it."""
    in_scopes = scopes_filter(user=user, session=session)
    blobs: dict[str, list[str]] = {scope: [] for scope in LEVELS}
    for scope, content in ConsolidatedMemory.objects.filter(in_scopes, agent=agent).values_list("scope", "content"):
        blobs[scope].append(content)
    buffered: dict[str, list[str]] = {scope: [] for scope in LEVELS}
    rows = (
        Reflection.objects.filter(in_scopes, agent=agent, absorbed=False)
        .annotate(rank=Window(RowNumber(), partition_by=[F("scope")], order_by=[F("created_at"), F("pk")]))
        .filter(rank__lte=REFLECTIONS_IN_PROMPT)
        .order_by("scope", "created_at", "pk")
        .values_list("scope", "content")
    )
    for scope, content in rows:
        buffered[scope].append(content)
    parts = []
    for scope in LEVELS:
        lines = [*(content for content in blobs[scope] if content), *(f"- {content}" for content in buffered[scope])]
        parts.append(f"<{scope}>\n" + ("\n".join(lines) or "(empty)") + f"\n</{scope}>")
    return "\n".join(parts)


def reflections_draft(
    *, window: list[NumberedMessage], session: Session, new_facts: list[str], job_id: int | None
) -> ReflectionDrafts:
    conversation = conversation_render(window=window)
    if not conversation:
        return ReflectionDrafts()
    memory = memory_text_for_prompt(agent=session.agent, user=session.user, session=session)
    facts_text = "\n".join(f"- {fact}" for fact in new_facts) or "(none)"
    drafts = llm_complete_json(
        purpose="reflect",
        messages=prompt_render(
            path=PROMPT,
            values={
                "memory": memory,
                "facts": facts_text,
                "conversation": conversation,
                "max_words": str(settings.REFLECTION_MAX_WORDS),
            },
        ),
        inputs={
            "messages": [item.as_input() for item in window if item.text],
            "facts": new_facts,
            "memory_text": memory,
        },
        validate=_validate,
        schema=SCHEMA,
        rules=lambda data: _rule_violations(
            data, memory_words=content_words(memory + "\n" + injected_memory_text(window=window))
        ),
        speed="slow",
        agent_id=session.agent_id,
        job_kind="formation",
        job_id=job_id,
    )
    return _drafts_screened(drafts=drafts, agent=session.agent, job_id=job_id)


def _drafts_screened(*, drafts: ReflectionDrafts, agent: Agent, job_id: int | None) -> ReflectionDrafts:
    """The drafts as the agent's sensitive-data policy lets them be stored."""
    screened = ReflectionDrafts()
    for level in LEVELS:
        for note in getattr(drafts, level):
            kept = statement_screen(
                agent=agent,
                text=note,
                target=SensitiveDataFinding.Target.REFLECTION,
                job_kind="formation",
                job_id=job_id,
            )
            if kept is not None:
                getattr(screened, level).append(kept)
    return screened


@transaction.atomic
def reflection_create(
    *,
    agent: Agent,
    scope: str,
    content: str,
    user: EndUser | None = None,
    session: Session | None = None,
    source: str = Reflection.Source.FORMATION,
    source_session: Session | None = None,
    created_at: datetime | None = None,
) -> Reflection:
    """A reflection in its scope's buffer. `created_at`: when an imported reflection was written (now otherwise)."""
    content = " ".join(content.split())
    if not content:
        raise ApplicationError("content must not be empty.", fields={"content": ["empty"]})
    if scope not in MemoryScope.values:
        raise ApplicationError("scope must be agent, user or session.", fields={"scope": ["invalid"]})
    if scope in (MemoryScope.USER, MemoryScope.SESSION) and user is None:
        raise ApplicationError(f"a {scope} reflection needs a user.", fields={"user": ["required"]})
    if scope == MemoryScope.SESSION and session is None:
        raise ApplicationError("a session reflection needs a session.", fields={"session": ["required"]})
    key = scope_key(scope=scope, user=user, session=session)
    reflection = Reflection.objects.create(
        agent=agent, scope=scope, content=content, source=source, source_session=source_session, **key
    )
    if created_at is not None:  # auto_now_add ignores a value given to create()
        reflection.created_at = created_at
        reflection.save(update_fields=["created_at"])
    return reflection


def reflections_store(*, drafts: ReflectionDrafts, session: Session) -> list[Reflection]:
    """Formation's drafts (validated by _validate) in one INSERT. bulk_create sends no post_save, so the context
    blocks of the scopes written are invalidated here, once per scope, after commit."""
    rows = [
        Reflection(
            agent=session.agent,
            scope=scope,
            content=content,
            source=Reflection.Source.FORMATION,
            source_session=session,
            **scope_key(scope=scope, user=session.user, session=session),
        )
        for scope in LEVELS
        for content in getattr(drafts, scope)
    ]
    if not rows:
        return []
    stored = Reflection.objects.bulk_create(rows)
    for agent_id, user_id, session_id in {(row.agent_id, row.user_id, row.session_id) for row in stored}:
        transaction.on_commit(
            partial(context_cache_invalidate, agent_id=agent_id, user_id=user_id, session_id=session_id)
        )
    return stored
