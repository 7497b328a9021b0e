import os
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.services import admin_user_ensure


class Command(BaseCommand):
    help = "Create the operator superuser if it does not exist (password from the ADMIN_PASSWORD variable)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", required=True)

    def handle(self, *args: Any, username: str, **options: Any) -> None:
        password = os.environ.get("ADMIN_PASSWORD")
        if not password:
            raise CommandError("set ADMIN_PASSWORD")
        created = admin_user_ensure(username=username, password=password)
        self.stdout.write(f"admin user {username!r} {'created' if created else 'already exists'}")
