"""The session's rolling summary is its consolidated blob. Besides consolidation by reflection count, it is
refreshed at least every SESSION_SUMMARY_EVERY_N_PAIRS message pairs, from the conversation itself; when the LLM
fails, a rule-based summary (key points, question/answer pairs) is stored, marked `is_rule_based`, and the next
LLM summary replaces it."""

from __future__ import annotations

from django.conf import settings

from conversations.models import Message, Session
from conversations.services.conversation_text import NumberedMessage, conversation_window
from core.llm.limits import words_cap
from reflections.models import ConsolidatedMemory, MemoryScope, Reflection

MAX_QUESTION_ANSWER_PAIRS = 5
MAX_STATEMENTS = 5


def session_summary_pending_messages(*, session: Session, memory: ConsolidatedMemory | None) -> list[Message]:
    """Formed messages the summary does not cover yet."""
    after = (memory.summarized_through_message_id if memory else None) or 0
    return list(
        Message.objects.filter(session=session, id__gt=after, id__lte=session.formed_through_message_id or 0).order_by(
            "id"
        )
    )


def session_summary_due(*, session: Session) -> bool:
    memory = ConsolidatedMemory.objects.filter(
        agent_id=session.agent_id, scope=MemoryScope.SESSION, session=session
    ).first()
    after = (memory.summarized_through_message_id if memory else None) or 0
    user_turns = Message.objects.filter(
        session=session, id__gt=after, id__lte=session.formed_through_message_id or 0, role=Message.Role.USER
    ).count()
    if memory is not None and memory.is_rule_based:
        return user_turns >= 1  # replace the fallback as soon as there is anything new
    return user_turns >= settings.SESSION_SUMMARY_EVERY_N_PAIRS


def session_summary_window(*, session: Session, memory: ConsolidatedMemory | None) -> list[NumberedMessage]:
    pending = session_summary_pending_messages(session=session, memory=memory)
    return conversation_window(messages=pending, token_budget=settings.FORMATION_TOKEN_BUDGET) if pending else []


def session_summary_rule_based(
    *, current: str, reflections: list[Reflection], window: list[NumberedMessage], word_limit: int
) -> str:
    """Key points (buffered reflections) and the latest question/answer pairs, after what the summary said; with
    none of these, the user's last statements. When over the word limit, the oldest lines go first."""
    lines = [line for line in current.splitlines() if line.strip()]
    if reflections:
        lines.append("Key points:")
        lines += [f"- {reflection.content}" for reflection in reflections]
    pairs = []
    for question, answer in zip(window, window[1:], strict=False):
        asked = question.message.role == Message.Role.USER and question.text.rstrip().endswith("?")
        if asked and answer.message.role == Message.Role.ASSISTANT:
            pairs.append(f"- Q: {question.text} A: {answer.text.split('. ')[0].rstrip('.')}.")
    if pairs:
        lines.append("Questions and answers:")
        lines += pairs[-MAX_QUESTION_ANSWER_PAIRS:]
    if not (lines or pairs):
        # Nothing buffered and nothing asked (a session of statements): what the user said last, a sentence each.
        said = [item.text.split(". ")[0].rstrip(".") for item in window if item.message.role == Message.Role.USER]
        if said:
            lines.append("The user said:")
            lines += [f"- {text}." for text in said[-MAX_STATEMENTS:] if text.strip()]
    while len(lines) > 1 and sum(len(line.split()) for line in lines) > word_limit:
        lines.pop(0)
    return words_cap(text="\n".join(lines), limit=word_limit)
