"""The conversation as the formation prompts see it: messages after the cursor, numbered, each cut to an excerpt
whose length follows its source's weight, within a token budget, with every secret already replaced by its label
("my bank PIN is [redacted password or PIN]"): no model formation calls, hosted or offline, reads one, and none is
kept in a job's input snapshot. What a model writes back is screened again (core.safety.sensitive_screening), where a
label counts as the secret it replaced."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings

from conversations.models import Message
from core.llm.tokens import count_tokens
from core.safety.sensitive import sensitive_findings, text_redacted

# Lower weight = shorter excerpt kept. What the user says is what memory is about.
ROLE_WEIGHTS: dict[str, float] = {
    Message.Role.USER: 1.0,
    Message.Role.TOOL: 0.5,
    Message.Role.OTHER: 0.5,
    Message.Role.ASSISTANT: 0.2,
    Message.Role.SYSTEM: 0.2,
}
# Memory the agent was given must not come back as new memory: drop the injected block wherever it was echoed.
_INJECTED_MEMORY = re.compile(r"<MemoryContext>.*?(</MemoryContext>|$)", re.S)


@dataclass(frozen=True)
class NumberedMessage:
    number: int
    message: Message
    text: str

    def as_input(self) -> dict:
        return {
            "number": self.number,
            "role": self.message.role,
            "text": self.text,
            "date": self.message.created_at.strftime("%Y-%m-%d %H:%M"),
        }

    def as_line(self) -> str:
        return f"[{self.number}] [{self.message.created_at:%Y-%m-%d}] {self.message.role}: {self.text}"


def message_excerpt(*, message: Message) -> str:
    if message.metadata.get("memory_injected"):
        return ""
    text = _INJECTED_MEMORY.sub("", message.content).strip()
    # Before the cut: a secret cut in half would no longer be recognised, and half of it would be read.
    text = text_redacted(text=text, findings=sensitive_findings(text))
    limit = int(settings.FORMATION_MESSAGE_MAX_CHARS * ROLE_WEIGHTS.get(message.role, 0.5))
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def injected_memory_text(*, window: list[NumberedMessage]) -> str:
    """The memory that had been injected into the window's messages (and that message_excerpt leaves out): to tell a
    statement that repeats it from one the conversation made."""
    parts = []
    for item in window:
        if item.message.metadata.get("memory_injected"):
            parts.append(item.message.content)
        else:
            parts.extend(match.group(0) for match in _INJECTED_MEMORY.finditer(item.message.content))
    return "\n".join(parts)


def conversation_window(*, messages: list[Message], token_budget: int) -> list[NumberedMessage]:
    """The longest prefix of messages whose excerpts fit the budget (at least one message, so formation always
    advances). Messages with nothing left after filtering are kept in the window but carry no text."""
    window: list[NumberedMessage] = []
    used = 0
    for number, message in enumerate(messages, start=1):
        text = message_excerpt(message=message)
        tokens = count_tokens(text) + 8
        if window and used + tokens > token_budget:
            break
        used += tokens
        window.append(NumberedMessage(number=number, message=message, text=text))
    return window


def conversation_render(*, window: list[NumberedMessage]) -> str:
    return "\n".join(item.as_line() for item in window if item.text)
