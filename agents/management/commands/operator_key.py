import getpass
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.models import OperatorKey
from agents.services.operator_keys import operator_key_create, operator_key_revoke


class Command(BaseCommand):
    help = (
        "Create, list or revoke operator keys: the administration API's credential (/api/v1/admin/: agents, their "
        "keys and webhooks). A created key is printed once and never again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="create a key")
        create.add_argument("--name", required=True, help="who or what uses it")
        create.add_argument("--quiet", action="store_true", help="print the key alone (for scripts)")
        actions.add_parser("list", help="list the keys (prefixes only)")
        revoke = actions.add_parser("revoke", help="revoke a key by its prefix")
        revoke.add_argument("prefix")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if action == "create":
            _, raw_key = operator_key_create(name=options["name"], created_by=f"command:{getpass.getuser()}")
            if not options["quiet"]:
                self.stdout.write(f"Operator key {options['name']!r} (shown once, store it now):")
            self.stdout.write(raw_key)
        elif action == "list":
            for key in OperatorKey.objects.order_by("created_at"):
                state = f"revoked {key.revoked_at:%Y-%m-%d}" if key.revoked_at else "active"
                self.stdout.write(f"{key.prefix}…  {key.name}  {state}")
        else:
            keys = list(OperatorKey.objects.filter(prefix=options["prefix"]))
            if len(keys) != 1:
                raise CommandError(f"{len(keys)} keys have the prefix {options['prefix']!r}; give one that matches one")
            operator_key_revoke(operator_key=keys[0])
            self.stdout.write(f"revoked {keys[0].prefix}…")
