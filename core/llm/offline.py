"""A deterministic, rule-based stand-in for the LLM, used when no LLM is configured, so that `make run` forms
real memory on a machine without an API key. It reads the structured inputs of a request (never the prompt text)
and answers in the same JSON schema the prompts ask a model for. It is much less capable than a model: it
recognises common first-person statements (name, age, home, job, likes and dislikes, possessions, plans, "my X is
Y") and merges and trims for consolidation."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from core.llm.providers import LLMProvider, LLMReply, LLMRequest

# A clause runs to punctuation, to a conjunction that starts a new first-person clause ("... and I live in"), or to
# a trailing time expression ("... last week").
_CLAUSE_END = (
    r"([^,.;!?]+?)(?=\s+(?:and|but|so|because)\s+(?:i|my)\b"
    r"|\s+(?:last|this|next)\s+(?:week|month|year|summer|winter|spring|autumn)\b"
    r"|\s+(?:yesterday|today|tomorrow|recently|now)\b|[,.;!?]|$)"
)
# (pattern, statement template, profile key: "" for none, or "{0}" to take it from the first group via _WORK_KEYS)
_PATTERNS: list[tuple[re.Pattern, str, str]] = [
    (re.compile(r"\b(?i:my name is) ([A-Z][\w'-]+(?: [A-Z][\w'-]+)?)"), "The user's name is {0}", "name"),
    (re.compile(r"\bi(?:'m| am) (\d{1,3}) years old", re.I), "The user is {0} years old", "age"),
    (re.compile(r"\bi(?: now)? live in " + _CLAUSE_END, re.I), "The user lives in {0}", "home_city"),
    (re.compile(r"\bi moved to " + _CLAUSE_END, re.I), "The user lives in {0}", "home_city"),
    (re.compile(r"\bi(?:'m| am) from " + _CLAUSE_END, re.I), "The user is from {0}", "hometown"),
    (re.compile(r"\bi(?: now)? work (as|at|for|in) " + _CLAUSE_END, re.I), "The user works {0} {1}", "{0}"),
    (re.compile(r"\bi(?:'m| am) allergic to " + _CLAUSE_END, re.I), "The user is allergic to {0}", ""),
    (
        re.compile(r"\bi(?:'m| am) (?:going to|planning to|about to) " + _CLAUSE_END, re.I),
        "The user plans to {0}",
        "",
    ),
    (
        re.compile(r"\bi (?:really |absolutely |also )?(like|love|enjoy|prefer|hate|dislike) " + _CLAUSE_END, re.I),
        "The user {0}s {1}",
        "",
    ),
    (re.compile(r"\bi have (an?|two|three|four|\d+) " + _CLAUSE_END, re.I), "The user has {0} {1}", ""),
    (re.compile(r"\bmy (?!name\b)((?:\w+ ){0,2}\w+) is " + _CLAUSE_END, re.I), "The user's {0} is {1}", ""),
]
_WORK_KEYS = {"as": "job_title", "at": "employer", "for": "employer", "in": "industry"}
_PRONOUNS = [(re.compile(r"\bmy\b", re.I), "their"), (re.compile(r"\bme\b", re.I), "them")]
# Verbs whose objects make one preference attribute: a later "hates X" replaces "loves X".
_PREFERENCE = re.compile(r"^The user (?:like|love|enjoy|prefer|hate|dislike)s (.+)$")
_STOPWORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "about",
        "from",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "i",
        "you",
        "he",
        "she",
        "it",
        "we",
        "they",
        "me",
        "my",
        "your",
        "our",
        "their",
        "this",
        "that",
        "these",
        "those",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "not",
        "no",
        "yes",
        "so",
        "very",
        "just",
        "really",
        "can",
        "could",
        "would",
        "should",
        "will",
        "what",
        "when",
        "where",
        "who",
        "how",
        "why",
        "there",
        "here",
        "then",
        "than",
        "too",
        "also",
        "am",
        "im",
        "i'm",
        "it's",
        "dont",
        "don't",
    }
)


def _sentences(text: str) -> list[str]:
    return [part.strip() for part in re.split(r"(?<=[.!?])\s+|\n+", text) if part.strip()]


def _third_person(text: str) -> str:
    for pattern, replacement in _PRONOUNS:
        text = pattern.sub(replacement, text)
    return text.strip()


def _attribute(content: str) -> str:
    """What a fact is about, so a newer value of the same attribute updates the older one."""
    preference = _PREFERENCE.match(content)
    if preference:
        return "preference:" + preference.group(1).lower()
    for marker in (" is ", " lives in ", " works ", " is from "):
        if marker in content:
            return content.split(marker, 1)[0].lower() + marker.strip()
    return content.lower()


def _topics(texts: list[str], count: int = 4) -> list[str]:
    words = [word for text in texts for word in re.findall(r"[a-z][a-z'-]{2,}", text.lower())]
    return [word for word, _ in Counter(w for w in words if w not in _STOPWORDS).most_common(count)]


class OfflineLLM(LLMProvider):
    name = "offline"

    def complete(self, request: LLMRequest) -> LLMReply:
        handler = getattr(self, f"_{request.purpose}", None)
        if handler is None:
            raise ValueError(f"the offline provider cannot do {request.purpose!r}")
        text = json.dumps(handler(request.inputs))
        return LLMReply(text=text, model="offline-rules", prompt_tokens=0, completion_tokens=0, latency_ms=0)

    def _extract_facts(self, inputs: dict[str, Any]) -> dict:
        facts: list[dict] = []
        seen: set[str] = set()
        max_words = inputs.get("max_words", 30)
        for message in inputs["messages"]:
            if message["role"] != "user":
                continue
            for sentence in _sentences(message["text"]):
                if sentence.endswith("?"):
                    continue
                for pattern, template, key in _PATTERNS:
                    for match in pattern.finditer(sentence):
                        parts = [_third_person(group) for group in match.groups()]
                        content = template.format(*parts).rstrip() + "."
                        if len(content.split()) < 4 or len(content.split()) > max_words or content in seen:
                            continue
                        seen.add(content)
                        fact = {"content": content, "scope": ["user"], "source": [message["number"]]}
                        key = _WORK_KEYS.get(parts[0].lower(), "") if key == "{0}" else key
                        if key:
                            fact["key"] = key
                        facts.append(fact)
        return {"facts": facts}

    def _reconcile_facts(self, inputs: dict[str, Any]) -> dict:
        existing = {fact["number"]: fact["content"] for fact in inputs["existing"]}
        decisions = []
        for new in inputs["new_facts"]:
            decision = {"new": new["number"], "action": "ADD", "target": None, "content": None, "reason": "new"}
            for number in new["candidates"]:
                if existing[number].lower().rstrip(".") == new["content"].lower().rstrip("."):
                    decision |= {"action": "NONE", "target": number, "reason": "already known"}
                    break
                if _attribute(existing[number]) == _attribute(new["content"]):
                    decision |= {
                        "action": "UPDATE",
                        "target": number,
                        "content": new["content"],
                        "reason": "new value",
                    }
                    break
            decisions.append(decision)
        return {"decisions": decisions}

    def _reflect(self, inputs: dict[str, Any]) -> dict:
        user_texts = [m["text"] for m in inputs["messages"] if m["role"] == "user"]
        if not user_texts:
            return {"agent": [], "user": [], "session": []}
        memory_text = inputs.get("memory_text", "").lower()
        topics = _topics(user_texts)
        session = [f"This session was about {', '.join(topics)}."] if topics else []
        user: list[str] = []
        average_words = sum(len(text.split()) for text in user_texts) / len(user_texts)
        questions = sum(text.rstrip().endswith("?") for text in user_texts)
        if len(user_texts) >= 3 and average_words < 8:
            user.append("The user writes short messages; keep replies brief.")
        if len(user_texts) >= 3 and questions / len(user_texts) >= 0.5:
            user.append("The user asks many direct questions; answer them first, then elaborate.")
        user = [note for note in user if note.lower() not in memory_text]
        session = [note for note in session if note.lower() not in memory_text]
        return {"agent": [], "user": user, "session": session}

    def _consolidate(self, inputs: dict[str, Any]) -> dict:
        lines = [line.strip() for line in inputs["current"].splitlines() if line.strip()]
        lines += [f"- {reflection.strip()}" for reflection in inputs["reflections"]]
        topics = _topics([m["text"] for m in inputs.get("messages", []) if m["role"] == "user"])
        if topics:
            lines.append(f"- Discussed: {', '.join(topics)}.")
        unique = list(dict.fromkeys(lines))
        while unique and sum(len(line.split()) for line in unique) > inputs["word_limit"]:
            unique.pop(0)  # the oldest lines go first
        return {"content": "\n".join(unique)}
