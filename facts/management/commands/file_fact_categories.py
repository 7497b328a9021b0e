from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.models import Agent
from facts.models import Fact
from facts.services.categories import facts_file_unfiled


class Command(BaseCommand):
    help = (
        "File the facts formed before categories existed (empty category) under a category with the offline "
        "lexicons and each agent's own categories, and their relations with their fact's; in batches, idempotent "
        "(a filed fact is never read again, so it can be stopped and run again)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--agent", help="one agent's external id (default: every agent)")
        parser.add_argument("--batch-size", type=int, default=500, help="facts per transaction (default 500)")
        parser.add_argument("--dry-run", action="store_true", help="count the facts to file, change nothing")

    def handle(self, *args: Any, agent: str | None, batch_size: int, dry_run: bool, **options: Any) -> None:
        if batch_size < 1:
            raise CommandError("--batch-size must be at least 1")
        agents = Agent.objects.order_by("pk")
        if agent is not None:
            agents = agents.filter(external_id=agent)
            if not agents.exists():
                raise CommandError(f"no agent {agent!r}")
        total = 0
        for each in agents:
            if dry_run:
                filed = Fact.objects.filter(agent=each, category="").count()
            else:
                filed = sum(facts_file_unfiled(agent=each, batch_size=batch_size))
            self.stdout.write(f"{each.external_id}: {filed} facts {'to file' if dry_run else 'filed'}")
            total += filed
        self.stdout.write(self.style.SUCCESS(f"{'would file' if dry_run else 'filed'} {total} facts in total"))
