from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.models import Agent
from core.exceptions import ApplicationError
from facts.services.reference_documents import reference_document_create

SUFFIXES = {".md", ".markdown", ".txt", ".rst"}


class Command(BaseCommand):
    help = (
        "Register reference documents for an agent from a text file or a folder of .md/.txt/.rst files (the file "
        "name, or a leading '# Title' line, is the title). Idempotent: a text already registered is skipped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--agent", required=True, help="the agent's external id")
        parser.add_argument("--dry-run", action="store_true", help="list what would be registered")

    def handle(self, *args: Any, path: Path, agent: str, dry_run: bool, **options: Any) -> None:
        owner = Agent.objects.filter(external_id=agent).first()
        if owner is None:
            raise CommandError(f"no agent {agent!r}")
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
        elif path.is_file():
            files = [path]
        else:
            raise CommandError(f"{path} does not exist")
        counts = {"registered": 0, "already registered": 0, "empty or invalid": 0}
        for number, file in enumerate(files, start=1):
            text = file.read_text(encoding="utf-8", errors="replace")
            first_line = text.lstrip().splitlines()[0] if text.strip() else ""
            title = first_line.lstrip("# ").strip() if first_line.startswith("#") else file.stem
            if dry_run:
                self.stdout.write(f"[{number}/{len(files)}] would register {title!r} ({len(text)} characters)")
                continue
            try:
                _, created = reference_document_create(
                    agent=owner, title=title[:300], content=text, metadata={"import": {"path": str(file)}}
                )
            except ApplicationError:
                counts["empty or invalid"] += 1
                continue
            counts["registered" if created else "already registered"] += 1
            self.stdout.write(f"[{number}/{len(files)}] {title}")
        if not dry_run:
            self.stdout.write(", ".join(f"{count} {what}" for what, count in counts.items()))
