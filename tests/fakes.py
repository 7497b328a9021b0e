"""The one thing tests replace: the LLM, at the provider interface."""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import Callable

from core.llm.base import LLMProvider, LLMReply, LLMRequest

Reply = str | dict | Callable[[LLMRequest], "str | dict"]
DEFAULT_REPLIES = {
    "reflect": {"agent": [], "user": [], "session": []},
    "extract_facts": {"facts": []},
}


class ScriptedLLM(LLMProvider):
    """Answers each purpose from a queue of scripted replies (dicts are sent as JSON, strings as they are,
    callables get the request). Every request is kept for assertions."""

    name = "scripted"

    def __init__(self) -> None:
        self.scripts: dict[str, deque[Reply]] = defaultdict(deque)
        self.requests: list[LLMRequest] = []

    def script(self, purpose: str, *replies: Reply) -> ScriptedLLM:
        self.scripts[purpose].extend(replies)
        return self

    def calls(self, purpose: str) -> list[LLMRequest]:
        return [request for request in self.requests if request.purpose == purpose]

    def complete(self, request: LLMRequest) -> LLMReply:
        self.requests.append(request)
        queue = self.scripts[request.purpose]
        if queue:
            reply = queue.popleft()
        elif request.purpose in DEFAULT_REPLIES:
            reply = DEFAULT_REPLIES[request.purpose]
        else:
            raise AssertionError(f"unexpected LLM call for {request.purpose!r}")
        if callable(reply):
            reply = reply(request)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return LLMReply(text=text, model="scripted", prompt_tokens=10, completion_tokens=5, latency_ms=1)


def facts_reply(*contents: str, scope: tuple[str, ...] = ("user",)) -> dict:
    return {"facts": [{"content": content, "scope": list(scope), "source": [1]} for content in contents]}
