from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from portability.services.reembed import ReembedProgress, embedding_space_reembed, reembed_pending_counts


class Command(BaseCommand):
    help = (
        "Switch to another embedding model or dimensions while search keeps serving: embed facts and embedded "
        "messages into the new space, build its index, switch reads atomically, drop the old space. Resumable."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--provider", default=settings.EMBEDDING_PROVIDER, choices=["local", "openai"])
        parser.add_argument("--model", default=settings.EMBEDDING_MODEL)
        parser.add_argument("--dimensions", type=int, default=settings.EMBEDDING_DIMENSIONS)
        parser.add_argument("--batch-size", type=int, default=256, help="records embedded and committed together")
        parser.add_argument(
            "--retire-grace-seconds",
            type=float,
            default=5.0,
            help="wait after the switch before dropping the old space, so searches already running on it finish",
        )
        parser.add_argument("--dry-run", action="store_true", help="count what would be embedded, change nothing")

    def handle(
        self,
        *args: Any,
        provider: str,
        model: str,
        dimensions: int,
        batch_size: int,
        retire_grace_seconds: float,
        dry_run: bool,
        **options: Any,
    ) -> None:
        if dry_run:
            counts = reembed_pending_counts(provider=provider, model=model, dimensions=dimensions)
            for kind, count in counts.items():
                self.stdout.write(f"would embed {count} {kind} into {provider}:{model}:{dimensions}")
            return
        report = embedding_space_reembed(
            provider=provider,
            model=model,
            dimensions=dimensions,
            batch_size=batch_size,
            retire_grace_seconds=retire_grace_seconds,
            on_progress=self._progress,
            on_phase=lambda message: self.stdout.write(message),
        )
        self.stdout.write(
            self.style.SUCCESS(
                f"{report.target.name} is active (was {report.source.name}) after {report.seconds:.1f}s: "
                f"embedded {report.embedded}, caught up {report.caught_up}, moved after the switch "
                f"{report.moved_after_switch}, dropped {report.dropped_rows} old vectors"
            )
        )

    def _progress(self, progress: ReembedProgress) -> None:
        eta = f"{progress.eta_seconds:.0f}s" if progress.eta_seconds is not None else "?"
        self.stdout.write(f"  {progress.kind}: {progress.done}/{progress.total} ({progress.rate:.0f}/s, ETA {eta})")
