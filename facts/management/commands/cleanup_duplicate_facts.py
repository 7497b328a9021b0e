from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.models import Agent
from facts.services.deduplication import facts_close_near_duplicates, facts_near_duplicates


class Command(BaseCommand):
    help = (
        "Close near-duplicate current facts within each scope: the oldest is kept, newer ones are closed as "
        "superseded by it (they stay in history)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--threshold",
            type=float,
            default=settings.FACT_DUPLICATE_SIMILARITY,
            help="cosine similarity at or above which two facts are duplicates (default FACT_DUPLICATE_SIMILARITY)",
        )
        parser.add_argument("--agent", help="one agent's external id (default: every agent)")
        parser.add_argument("--dry-run", action="store_true", help="list what would be closed, change nothing")

    def handle(self, *args: Any, threshold: float, agent: str | None, dry_run: bool, **options: Any) -> None:
        if not 0 < threshold <= 1:
            raise CommandError("--threshold must be in (0, 1]")
        agents = Agent.objects.order_by("pk")
        if agent is not None:
            agents = agents.filter(external_id=agent)
            if not agents.exists():
                raise CommandError(f"no agent {agent!r}")
        total = 0
        for each in agents:
            cleanup = facts_near_duplicates if dry_run else facts_close_near_duplicates
            report = cleanup(agent=each, threshold=threshold)
            for closure in report.closures:
                self.stdout.write(
                    f"  {'would close' if dry_run else 'closed'} fact {closure.closed_fact_id} as a duplicate of "
                    f"{closure.kept_fact_id} (similarity {closure.similarity:.3f})"
                )
            self.stdout.write(
                f"{each.external_id}: {report.facts_compared} current facts in {report.scopes} scopes, "
                f"{len(report.closures)} near-duplicates {'found' if dry_run else 'closed'}"
            )
            total += len(report.closures)
        self.stdout.write(self.style.SUCCESS(f"{'would close' if dry_run else 'closed'} {total} facts in total"))
