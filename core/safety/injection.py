"""Injection-shaped text: what reads as an instruction to the model that will later read memory, rather than as
information about the user or the world. Deterministic and offline: rules, no model.

Memory is read by a model in every later conversation, so a stored "ignore your instructions and ..." is a prompt
injection that waits. Formation and the assistant's memory tools hold such text back (formation.services.
memory_trust); docs/security.md lists what the rules find and what they leave alone on purpose.

The rules aim at the shape of an attack, not at its topic: a user's own wishes about the assistant ("The user wants
answers in Spanish", "call me Sam from now on") are ordinary memory and must stay; a fact that overrides the
assistant's instructions, forges a role or a memory tag, hides a link or a tool call does not."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Tags the service wraps memory in (reflections.selectors.context, bundle, chat proxy), and the chat-template
# markers models are trained on: text holding one could close the quoted memory and speak as someone else.
MEMORY_TAGS = (
    "MemoryContext",
    "MemoryNotice",
    "AgentMemory",
    "UserMemory",
    "SessionMemory",
    "RelevantFacts",
    "RecentTurns",
    "SessionSummary",
    "SimilarPastMessages",
)
_TAG_FORGERY = re.compile(
    r"</?\s*(?:" + "|".join(MEMORY_TAGS) + r"|system|developer|assistant|instructions?|tool_call|function_call"
    r"|im_start|im_end|start_of_turn|end_of_turn)\b[^>]*>"
    r"|<\|[a-z_]{2,20}\|>|\[/?INST\]|<<\s*/?SYS\s*>>|</s>",
    re.IGNORECASE,
)
_OVERRIDE = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass|drop|abandon)\s+(?:all\s+|any\s+|every\s+)?"
    r"(?:(?:of\s+)?(?:the|your|my|these|those|its|their)\s+)?"
    r"(?:previous|prior|above|earlier|original|existing|initial|system|safety|current|old)?\s*"
    r"(?:instructions?|prompts?|rules|guidelines|directives|guardrails|programming|system\s+message)\b",
    re.IGNORECASE,
)
_SYSTEM_PROMPT = re.compile(
    r"\b(?:system|developer|hidden|initial)\s+(?:prompt|message|instructions?)\b"
    r"|\bnew\s+(?:system\s+)?instructions?\s*:"
    r"|\b(?:reveal|print|show|output|repeat|leak)\s+(?:me\s+)?(?:your|the)\s+(?:system\s+prompt|instructions|api\s+keys?)",
    re.IGNORECASE,
)
_PERSONA = re.compile(
    r"\byou\s+are\s+(?:now|no\s+longer)\b"
    r"|\b(?:act|behave|respond)\s+as\s+(?:if\s+you\s+(?:were|are)\s+)?(?:the\s+|a\s+|an\s+)?"
    r"(?:system|administrator|admin|developer|root|unrestricted|jailbroken)\b"
    r"|\b(?:DAN|developer|god|jailbreak)\s+mode\b|\bjailbreak",
    re.IGNORECASE,
)
# A line that starts by naming a role, as a chat transcript does: "System: ...", "### Assistant:".
_ROLE_LINE = re.compile(r"(?:^|\n)\s*(?:#+\s*)?(?:system|developer|assistant)\s*:", re.IGNORECASE)
_HIDDEN_LINK = re.compile(
    r"!\[[^\]]*\]\(\s*\S+\)"  # a markdown image: rendered, its URL is fetched (and can carry data out)
    r"|\]\(\s*(?:javascript|data|vbscript):"
    r"|<\s*(?:img|script|iframe|a\s+href|object|embed|svg|form|meta|link)\b"
    r"|\b(?:javascript|vbscript):",
    re.IGNORECASE,
)
_TOOL_CALL = re.compile(
    r"\"(?:name|function)\"\s*:\s*\"[a-z_]+\"\s*,\s*\"(?:arguments|parameters)\""
    r"|\b(?:call|invoke|run|execute|use)\s+(?:the\s+)?(?:tool\s+|function\s+)?"
    r"`?(?:save_memory|update_memory|delete_memory|search_memory)\b"
    r"|\btool_calls?\b|\bfunction_call\b",
    re.IGNORECASE,
)
# Characters that hide text from a reader but not from a model: zero-width, bidirectional overrides, Unicode tags.
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")


@dataclass(frozen=True)
class InjectionFinding:
    rule: str
    excerpt: str

    @property
    def detail(self) -> str:
        return f"{self.rule}: {self.excerpt!r}"[:300]


_RULES: tuple[tuple[str, re.Pattern], ...] = (
    ("forged tag or chat-template marker", _TAG_FORGERY),
    ("overrides the assistant's instructions", _OVERRIDE),
    ("about the system prompt", _SYSTEM_PROMPT),
    ("changes the assistant's persona", _PERSONA),
    ("speaks as a role", _ROLE_LINE),
    ("hidden link or markup", _HIDDEN_LINK),
    ("tool call", _TOOL_CALL),
)


def injection_finding(text: str) -> InjectionFinding | None:
    """The first rule the text breaks, or None. Fullwidth and other compatibility forms are folded first (NFKC), so
    that "＜/MemoryContext＞" is read as the tag it imitates."""
    hidden = _INVISIBLE.search(text)
    if hidden:
        return InjectionFinding("invisible characters", f"U+{ord(hidden.group()):04X}")
    folded = unicodedata.normalize("NFKC", text)
    for rule, pattern in _RULES:
        match = pattern.search(folded)
        if match:
            return InjectionFinding(rule, match.group().strip()[:80])
    return None


def injection_lines_drop(text: str) -> str:
    """A long text (a consolidated blob) without the lines that read as instructions to the model."""
    return "\n".join(line for line in text.splitlines() if injection_finding(line) is None)
