import getpass
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from agents.models import EndUser
from portability.services.erasure import user_erase


class Command(BaseCommand):
    help = (
        "Erase one end user: messages, facts (all versions), reflections, blobs, embeddings and cached context. "
        "Leaves an audit record (core.ErasureRecord) without content."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--agent", required=True, help="the agent's external id")
        parser.add_argument("--user", required=True, help="the user's external id")
        parser.add_argument("--requested-by", help="who asked for the erasure (default: the shell user)")
        parser.add_argument("--dry-run", action="store_true", help="count what would be deleted, delete nothing")
        parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    def handle(
        self, *args: Any, agent: str, user: str, requested_by: str | None, dry_run: bool, yes: bool, **options: Any
    ) -> None:
        end_user = EndUser.objects.filter(agent__external_id=agent, external_id=user).first()
        if end_user is None:
            raise CommandError(f"agent {agent!r} has no user {user!r}")
        if not (dry_run or yes) and input(f"Erase user {user!r} of agent {agent!r}? Type 'yes': ").strip() != "yes":
            raise CommandError("not confirmed; nothing was erased")
        requester = requested_by or f"command:{getpass.getuser()}"
        # A dry run executes the same deletion and rolls it back, so its counts are exact.
        with transaction.atomic():
            record = user_erase(user=end_user, requested_by=requester)
            if dry_run:
                transaction.set_rollback(True)
        verb = "would delete" if dry_run else "deleted"
        for label, count in record.deleted_counts.items():
            self.stdout.write(f"  {verb} {count:>8} {label}")
        if dry_run:
            self.stdout.write("dry run: nothing was erased")
        else:
            self.stdout.write(self.style.SUCCESS(f"erased; audit record {record.pk} ({record.user_external_id_hash})"))
