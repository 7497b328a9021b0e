import json
from collections import Counter
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.models import Agent, EndUser
from portability.selectors.native_export import memories_export


class Command(BaseCommand):
    help = (
        "Export an agent's memory (or one user's) as JSON lines: users, sessions, messages, facts with every "
        "version, blobs with past versions, reflections. `import_memories --format native` reads it back."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--agent", required=True, help="the agent's external id")
        parser.add_argument("--user", help="only this user's memory (agent-wide memory is left out)")
        parser.add_argument("--output", type=Path, help="file to write (default: standard output)")

    def handle(self, *args: Any, agent: str, user: str | None, output: Path | None, **options: Any) -> None:
        agent_row = Agent.objects.filter(external_id=agent).first()
        if agent_row is None:
            raise CommandError(f"no agent {agent!r}")
        user_row = None
        if user is not None:
            user_row = EndUser.objects.filter(agent=agent_row, external_id=user).first()
            if user_row is None:
                raise CommandError(f"agent {agent!r} has no user {user!r}")
        counts: Counter = Counter()
        with output.open("w", encoding="utf-8") if output else nullcontext(self.stdout) as stream:
            for row in memories_export(agent=agent_row, user=user_row):
                stream.write(json.dumps(row, ensure_ascii=False) + "\n")
                counts[row["kind"]] += 1
        counts.pop("export", None)
        summary = ", ".join(f"{n} {kind} rows" for kind, n in counts.items()) or "nothing"
        self.stderr.write(f"exported {summary}" + (f" to {output}" if output else ""))
