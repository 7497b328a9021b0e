"""Past messages as they are handed back to a reader (message search, the memory bundle, the MCP tools): under the
agent's sensitive-data policy, like facts and reflections. The stored transcript keeps what was said (it is the
record formation, export and erasure work from); what is read back never carries a secret: redacted ("the wifi
password at my place is [redacted password or PIN]") or, under `withhold`, without the sentence that held it.
docs/security.md says what is kept where."""

from __future__ import annotations

from collections.abc import Iterable

from agents.models import Agent
from conversations.models import Message
from core.safety.sensitive import SensitiveDataPolicy, sensitive_findings, text_redacted, text_without_secret_sentences

WITHHELD_MESSAGE = "[withheld: this message held a secret]"


def message_text_for_reading(*, agent: Agent, text: str) -> str:
    findings = sensitive_findings(text)
    if not findings:
        return text
    if agent.sensitive_data == SensitiveDataPolicy.REDACT:
        return text_redacted(text=text, findings=findings)
    return text_without_secret_sentences(text=text, findings=findings) or WITHHELD_MESSAGE


def metadata_for_reading(*, agent: Agent, metadata: object) -> object:
    """The caller's metadata with each string in it screened like the text (keys are the caller's schema, kept)."""
    if isinstance(metadata, str):
        return message_text_for_reading(agent=agent, text=metadata)
    if isinstance(metadata, dict):
        return {key: metadata_for_reading(agent=agent, metadata=value) for key, value in metadata.items()}
    if isinstance(metadata, list):
        return [metadata_for_reading(agent=agent, metadata=value) for value in metadata]
    return metadata


def messages_screen_for_reading(*, agent: Agent, messages: Iterable[Message]) -> None:
    """Screens the content and metadata of these loaded messages in place, for reading only: they must not be saved
    afterwards (selectors never save what they read)."""
    for message in messages:
        message.content = message_text_for_reading(agent=agent, text=message.content)
        if message.metadata:
            message.metadata = metadata_for_reading(agent=agent, metadata=message.metadata)
