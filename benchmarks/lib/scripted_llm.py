"""The scripted LLM of the development set for time: an OpenAI-compatible stub (tests/llm_stub_server.py) that
answers each session's fact extraction with the reply a good LLM would give, written with the set
(tests/fixtures/time_devset/), and each reconciliation as a good LLM would decide it: UPDATE or DELETE where the set
says a new statement replaces or ends an earlier one and that one is among the existing facts shown, NONE for a
statement already stored word for word, ADD otherwise. Reflection and consolidation get the stub's healthy replies.

The extraction request is told apart by its conversation: the session most of the window's user messages belong to.
Source numbers in the set are positions in the session; they are mapped to the window's numbers by the messages'
text, so a window that does not start at the session's first message still cites the right messages."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from benchmarks.lib.time_devset import Conversation, Session
from tests.llm_stub_server import StubLLMServer, _section, purpose_of


def _normalised(text: str) -> str:
    return " ".join(text.split()).rstrip(" .…").lower()


def _window(body: dict) -> list[tuple[int, str, str]]:
    """(number, role, text) of each `[n] [date] role: text` line of the extraction prompt's conversation."""
    lines = []
    for line in _section(body, "Conversation"):
        number, _, rest = line.partition("] ")
        _, _, said = rest.partition("] ")
        role, _, text = said.partition(": ")
        if number.startswith("[") and number[1:].isdigit() and text:
            lines.append((int(number[1:]), role, text))
    return lines


@dataclass
class ScriptedLLM(StubLLMServer):
    conversations: list[Conversation] = field(default_factory=list)
    served: Counter = field(default_factory=Counter)
    _by_user_line: dict[str, Session] = field(default_factory=dict)
    _reconcile: dict[str, tuple[str, str]] = field(default_factory=dict)
    _sessions: dict[str, Session] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for conversation in self.conversations:
            for session in conversation.sessions:
                self._sessions[session.id] = session
                for message in session.messages:
                    if message.role == "user":
                        self._by_user_line.setdefault(_normalised(message.content), session)
                facts = session.extraction["facts"]
                for item in session.reconciliation:
                    new = facts[item["new"] - 1]["content"]
                    self._reconcile[_normalised(new)] = (item["action"], _normalised(item["target"]))

    def healthy_content(self, body: dict) -> str:
        purpose = purpose_of(body)
        if purpose == "extract_facts":
            return json.dumps(self._extraction(body))
        if purpose == "reconcile_facts":
            return json.dumps(self._decisions(body))
        return super().healthy_content(body)

    def _extraction(self, body: dict) -> dict:
        window = _window(body)
        votes = Counter(
            self._by_user_line[_normalised(text)].id
            for _, role, text in window
            if role == "user" and _normalised(text) in self._by_user_line
        )
        session = self._sessions.get(votes.most_common(1)[0][0]) if votes else None
        if session is None:
            self.served["extraction_unknown_window"] += 1
            return {"facts": [], "entities": [], "relations": []}
        number_of_text = {_normalised(text): number for number, _, text in window}
        number_of_position = {
            position: number_of_text[_normalised(message.content)]
            for position, message in enumerate(session.messages, start=1)
            if _normalised(message.content) in number_of_text
        }
        facts = []
        for item in session.extraction["facts"]:
            sources = [number_of_position[p] for p in item["source"] if p in number_of_position]
            facts.append(item | {"source": sources})
        self.served["extraction"] += 1
        return session.extraction | {"facts": facts}

    def _decisions(self, body: dict) -> dict:
        existing: dict[str, int] = {}
        for line in _section(body, "EXISTING facts"):
            if not line.strip():
                break  # the NEW facts follow a blank line
            number, _, content = line.partition(". ")
            if number.isdigit():
                existing[_normalised(content)] = int(number)
        decisions = []
        for line in _section(body, "NEW facts"):
            number, _, rest = line.partition(". ")
            if not number.isdigit():
                continue
            content = rest.rsplit("  (similar: ", 1)[0]
            decision: dict = {"new": int(number), "action": "ADD", "target": None, "content": None, "reason": "new"}
            hint = self._reconcile.get(_normalised(content))
            if _normalised(content) in existing:
                decision |= {"action": "NONE", "target": existing[_normalised(content)], "reason": "already known"}
            elif hint is not None and hint[1] in existing:
                action, target = hint
                decision |= {"action": action, "target": existing[target], "reason": "the statement changed"}
                if action == "UPDATE":
                    decision["content"] = content
            elif hint is not None:
                self.served["reconcile_target_not_shown"] += 1
            self.served[f"reconcile_{decision['action'].lower()}"] += 1
            decisions.append(decision)
        return {"decisions": decisions}
