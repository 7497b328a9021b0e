"""Formation step 2: the LLM lists candidate facts from the conversation window."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from conversations.models import Agent, Message
from conversations.services.conversation_text import NumberedMessage, conversation_render
from core.llm.client import OutputInvalid, llm_complete_json, prompt_render
from core.models import SensitiveDataFinding
from core.sensitive import sensitive_findings
from core.sensitive_screening import statement_screen
from facts.models import FactScope

PROMPT = Path(__file__).resolve().parent.parent / "prompts" / "extract_facts.txt"
PROFILE_KEY = re.compile(r"^[a-z][a-z0-9_]{0,99}$")
_NON_FACTS = re.compile(r"^(yes|no|ok|okay|sure|thanks|thank you|maybe|hello|hi)\b[.!]*$", re.I)
MIN_FACT_WORDS = 4


@dataclass(frozen=True)
class ExtractedFact:
    content: str
    scopes: list[str]
    source_messages: list[Message]
    key: str = ""


def _validate(data: object) -> list[dict]:
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        raise OutputInvalid('expected an object {"facts": [...]}')
    for index, item in enumerate(data["facts"]):
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            raise OutputInvalid(f"facts[{index}] needs a string 'content'")
        scope = item.get("scope", ["user"])
        scope = [scope] if isinstance(scope, str) else scope
        if not isinstance(scope, list) or not scope or not set(scope) <= set(FactScope.values):
            raise OutputInvalid(f"facts[{index}].scope must be a list of 'user' and 'agent'")
        item["scope"] = scope
        key = item.get("key")
        # A proposed profile key is kept only when well-formed and about the user; a bad one is not worth a retry.
        item["key"] = key if isinstance(key, str) and PROFILE_KEY.match(key) and scope == ["user"] else ""
        source = item.get("source", [])
        item["source"] = [
            number for number in (source if isinstance(source, list) else [source]) if isinstance(number, int)
        ]
    return data["facts"]


def is_plausible_fact(content: str) -> bool:
    """Drops what is obviously not a fact: questions, bare acknowledgements, fragments, over-long statements."""
    words = content.split()
    return (
        MIN_FACT_WORDS <= len(words) <= settings.FACT_MAX_WORDS
        and len(content) <= settings.FACT_MAX_CHARS
        and not content.rstrip().endswith("?")
        and not _NON_FACTS.match(content.strip())
    )


def facts_extract(*, window: list[NumberedMessage], agent_id: int, job_id: int | None) -> list[ExtractedFact]:
    by_number = {item.number: item.message for item in window}
    user_messages = [item.message for item in window if item.message.role == Message.Role.USER and item.text]
    conversation = conversation_render(window=window)
    if not conversation:
        return []
    items = llm_complete_json(
        purpose="extract_facts",
        messages=prompt_render(
            path=PROMPT, values={"conversation": conversation, "max_words": str(settings.FACT_MAX_WORDS)}
        ),
        inputs={"messages": [item.as_input() for item in window if item.text], "max_words": settings.FACT_MAX_WORDS},
        validate=_validate,
        speed="fast",
        agent_id=agent_id,
        job_kind="formation",
        job_id=job_id,
    )
    extracted: list[ExtractedFact] = []
    agent: Agent | None = None  # read only when a fact holds a secret: its policy decides
    for item in items:
        content = " ".join(item["content"].split())
        if not is_plausible_fact(content):
            continue
        if sensitive_findings(content):
            agent = agent or Agent.objects.get(pk=agent_id)
            content = statement_screen(
                agent=agent,
                text=content,
                target=SensitiveDataFinding.Target.FACT,
                job_kind="formation",
                job_id=job_id,
            )
            if content is None:
                continue
        sources = [by_number[number] for number in item["source"] if number in by_number]
        extracted.append(
            ExtractedFact(
                content=content, scopes=item["scope"], source_messages=sources or user_messages, key=item["key"]
            )
        )
    return extracted
