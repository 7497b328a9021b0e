"""manage.py tool_definitions: the memory tools' definitions as an agent with RAG on is offered them (GET
/api/v1/tools), in OpenAI's `tools` format, as JSON. The TypeScript SDK's tool helpers are generated from it
(`npm run generate` in clients/typescript), so that they show a model what the service's own tools show."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand

from agents.models import Agent
from formation.tools.registry import tool_definitions


class Command(BaseCommand):
    help = "Print the memory tools' OpenAI-format definitions (every tool, as with RAG on) as JSON."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(json.dumps(tool_definitions(agent=Agent(rag_enabled=True)), indent=2, ensure_ascii=False))
