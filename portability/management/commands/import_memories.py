import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.exceptions import ApplicationError
from portability.formats import READERS, memory_import_read
from portability.services.importer import ImportReport, memories_import
from portability.services.native_import import native_import

FORMATS = [*READERS, "native"]


class Command(BaseCommand):
    help = (
        "Import memory exported from another store into an agent (docs/migration.md describes each format). "
        "Idempotent: running it again adds nothing; re-running after a crash continues."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the export: a file or a folder, depending on the format")
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument(
            "--agent", required=True, help="the target agent's external id (created if missing; for locomo, a prefix)"
        )
        parser.add_argument("--user", help="put everything under this user (formats without their own user ids)")
        parser.add_argument("--dry-run", action="store_true", help="count what would be imported, store nothing")
        parser.add_argument(
            "--leave-unformed",
            action="store_true",
            help="let formation run over the imported conversations (default: they count as already formed)",
        )
        parser.add_argument(
            "--embed-messages-here",
            action="store_true",
            help="embed messages in this process (default: queued for the Celery workers, as at ingestion)",
        )
        parser.add_argument("--batch-size", type=int, default=256, help="records embedded and committed together")

    def handle(
        self,
        *args: Any,
        path: Path,
        format: str,
        agent: str,
        user: str | None,
        dry_run: bool,
        leave_unformed: bool,
        batch_size: int,
        **options: Any,
    ) -> None:
        embed_messages_here = options["embed_messages_here"]
        started = time.monotonic()
        self._last_progress = 0.0
        try:
            if format == "native":
                if user:
                    raise CommandError("a native export carries its own users; --user does not apply")
                report = native_import(
                    path=path,
                    agent_external_id=agent,
                    dry_run=dry_run,
                    embed_messages_here=embed_messages_here,
                    on_progress=self._progress,
                )
            else:
                imports = memory_import_read(format=format, path=path, agent_external_id=agent, user_external_id=user)
                report = memories_import(
                    imports=imports,
                    dry_run=dry_run,
                    embed_messages_here=embed_messages_here,
                    leave_unformed=leave_unformed,
                    batch_size=batch_size,
                    on_progress=self._progress,
                )
        except ApplicationError as error:
            raise CommandError(error.message) from error
        self._report(report, seconds=time.monotonic() - started, dry_run=dry_run)

    def _progress(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last_progress >= 1.0 or (total and done >= total):
            self._last_progress = now
            self.stderr.write(f"  {stage}: {done}/{total}" if total else f"  {stage}: {done}")

    def _report(self, report: ImportReport, *, seconds: float, dry_run: bool) -> None:
        self.stdout.write(("dry run, nothing stored: " if dry_run else "") + f"agents {', '.join(report.agents)}")
        for kind, counts in report.counts.items():
            self.stdout.write(f"  {kind}: " + ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())))
        for reason, n in sorted(report.skipped.items()):
            self.stdout.write(f"  not imported: {n} {reason}")
        if report.embedded:
            self.stdout.write("  embedded: " + ", ".join(f"{n} {kind}" for kind, n in sorted(report.embedded.items())))
        for what, n in sorted(report.queued.items()):
            self.stdout.write(f"  queued for the workers: {n} {what}")
        for warning in report.warnings[:50]:
            self.stdout.write(self.style.WARNING(f"  warning: {warning}"))
        if len(report.warnings) > 50:
            self.stdout.write(self.style.WARNING(f"  ... and {len(report.warnings) - 50} more warnings"))
        self.stdout.write(self.style.SUCCESS(f"done in {seconds:.1f}s"))
