from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.models import Agent, AgentAPIKey
from agents.services.api_keys import api_key_create, api_key_revoke


class Command(BaseCommand):
    help = "Create, list or revoke an agent's API keys. A created key is printed once and never again."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="create a key (and the agent with --create-agent)")
        create.add_argument("--agent", required=True, help="the agent's external id")
        create.add_argument("--name", default="", help="what the key is for")
        create.add_argument("--create-agent", action="store_true", help="create the agent if it does not exist")
        create.add_argument("--quiet", action="store_true", help="print the key alone (for scripts)")
        listing = actions.add_parser("list", help="list an agent's keys (prefixes only)")
        listing.add_argument("--agent", required=True)
        revoke = actions.add_parser("revoke", help="revoke a key by its prefix")
        revoke.add_argument("prefix")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if action == "create":
            agent = self._agent(options["agent"], create=options["create_agent"])
            api_key, raw_key = api_key_create(agent=agent, name=options["name"])
            if not options["quiet"]:
                self.stdout.write(f"API key for agent {agent.external_id!r} (shown once, store it now):")
            self.stdout.write(raw_key)
        elif action == "list":
            for api_key in self._agent(options["agent"], create=False).api_keys.order_by("created_at"):
                state = f"revoked {api_key.revoked_at:%Y-%m-%d}" if api_key.revoked_at else "active"
                self.stdout.write(f"{api_key.prefix}…  {api_key.name or '-'}  {state}")
        else:
            keys = list(AgentAPIKey.objects.filter(prefix=options["prefix"]))
            if len(keys) != 1:
                raise CommandError(f"{len(keys)} keys have the prefix {options['prefix']!r}; give one that matches one")
            api_key_revoke(api_key=keys[0])
            self.stdout.write(f"revoked {keys[0].prefix}…")

    @staticmethod
    def _agent(external_id: str, *, create: bool) -> Agent:
        if create:
            return Agent.objects.get_or_create(external_id=external_id, defaults={"name": external_id})[0]
        agent = Agent.objects.filter(external_id=external_id).first()
        if agent is None:
            raise CommandError(f"no agent {external_id!r} (use --create-agent)")
        return agent
