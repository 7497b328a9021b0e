"""A Celery worker whose LLM answers instantly, for measuring formation overhead without LLM time.

    python -m benchmarks.lib.formation_worker [celery worker options...]

The fake answers every formation call at once with a plausible reply: two facts from the conversation's first two
user messages (so reconciliation and fact embedding run as they would), one session reflection, ADD for every new
fact, and consolidation by joining lines. The rest of the worker is the product's."""

from __future__ import annotations

import json
import sys


def main() -> None:
    import django

    django.setup()
    from core.llm.base import LLMProvider, LLMReply, LLMRequest
    from core.llm.providers import set_llm_provider_override
    from memory_project.celery import app

    class InstantLLM(LLMProvider):
        name = "instant"

        def complete(self, request: LLMRequest) -> LLMReply:
            inputs = request.inputs
            if request.purpose == "extract_facts":
                users = [m for m in inputs.get("messages", []) if m.get("role") == "user"][:2]
                reply = {
                    "facts": [
                        {"content": " ".join(m["text"].split()[:25]), "scope": ["user"], "source": [m["number"]]}
                        for m in users
                    ]
                }
            elif request.purpose == "reconcile_facts":
                reply = {
                    "decisions": [
                        {"new": new["number"], "action": "ADD", "target": None, "content": None, "reason": "new"}
                        for new in inputs.get("new_facts", [])
                    ]
                }
            elif request.purpose == "reflect":
                reply = {"agent": [], "user": [], "session": ["The user talked about their week and plans."]}
            elif request.purpose == "consolidate":
                lines = [inputs.get("current", ""), *(f"- {r}" for r in inputs.get("reflections", []))]
                reply = {"content": "\n".join(line for line in lines if line)}
            else:
                reply = {"content": "Summary of the session so far."}
            return LLMReply(text=json.dumps(reply), model="instant", prompt_tokens=0, completion_tokens=0, latency_ms=0)

    set_llm_provider_override(InstantLLM())
    app.worker_main(["worker", *sys.argv[1:]])


if __name__ == "__main__":
    main()
