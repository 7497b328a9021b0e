from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from conversations.services.message_embeddings import message_referred_dates_backfill
from facts.services.facts import fact_referred_dates_backfill


class Command(BaseCommand):
    help = (
        "After an upgrade from a release before time-aware search: give the facts and message vectors stored before "
        "it the day their text names (refers_to), as new ones get it when written. Idempotent; batch by batch, so it "
        "can run while the service serves."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=2000)

    def handle(self, *args: Any, batch_size: int, **options: Any) -> None:
        for kind, backfill in (("facts", fact_referred_dates_backfill), ("messages", message_referred_dates_backfill)):
            after, dated = 0, 0
            while True:
                batch_dated, next_after = backfill(after_id=after, limit=batch_size)
                if next_after is None:
                    break
                after = next_after
                dated += batch_dated
            self.stdout.write(f"{kind}: {dated} given the day their text names")
