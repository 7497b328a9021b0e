from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.models import Agent
from reflections.models import MemoryScope
from reflections.selectors.consolidation_due import scopes_due_for_consolidation
from reflections.services.consolidation import ScopeKey
from reflections.services.consolidation_runs import scopes_consolidate


class Command(BaseCommand):
    help = (
        "Consolidate buffered reflections into the blob of a session, a user or an agent (even below the "
        "threshold), or of every scope that is due (--due). Runs here, or on the workers with --queue."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--agent", help="the agent's external id; alone: the agent's own blob")
        parser.add_argument("--user", help="the user's blob (needs --agent)")
        parser.add_argument("--session", help="the session's blob (needs --agent)")
        parser.add_argument("--due", action="store_true", help="every scope that is due (of --agent, if given)")
        parser.add_argument("--queue", action="store_true", help="queue the work for the Celery workers")
        parser.add_argument("--dry-run", action="store_true", help="list the scopes, consolidate nothing")

    def handle(
        self,
        *args: Any,
        agent: str | None,
        user: str | None,
        session: str | None,
        due: bool,
        queue: bool,
        dry_run: bool,
        **options: Any,
    ) -> None:
        if (user or session) and not agent:
            raise CommandError("--user and --session need --agent")
        if due and (user or session):
            raise CommandError("--due takes at most --agent")
        if not (agent or due):
            raise CommandError("name an --agent (and optionally --user or --session), or pass --due")
        agent_row = Agent.objects.filter(external_id=agent).first() if agent else None
        if agent and agent_row is None:
            raise CommandError(f"no agent {agent!r}")
        if due:
            keys = scopes_due_for_consolidation(agent=agent_row)
        elif agent_row is None:
            raise CommandError("name an --agent")  # unreachable: checked above, for the type checker
        elif session:
            session_row = agent_row.sessions.filter(external_id=session).first()
            if session_row is None:
                raise CommandError(f"agent {agent!r} has no session {session!r}")
            keys = [ScopeKey(agent_row.pk, MemoryScope.SESSION, session_row.user_id, session_row.pk)]
        elif user:
            user_row = agent_row.users.filter(external_id=user).first()
            if user_row is None:
                raise CommandError(f"agent {agent!r} has no user {user!r}")
            keys = [ScopeKey(agent_row.pk, MemoryScope.USER, user_row.pk, None)]
        else:
            keys = [ScopeKey(agent_row.pk, MemoryScope.AGENT, None, None)]
        if dry_run:
            for key in keys:
                self.stdout.write(f"  would consolidate {self._describe(key)}")
            self.stdout.write(f"dry run: {len(keys)} scopes")
            return
        results = scopes_consolidate(keys=keys, force=not due, queue=queue)
        for result in results:
            line = f"  {result.outcome} {self._describe(result.key)}"
            if result.outcome == "consolidated":
                line += f": version {result.version} absorbed {result.reflections} reflections"
            if result.outcome == "failed":
                self.stdout.write(self.style.ERROR(f"{line}: {result.error}"))
            else:
                self.stdout.write(line)
        self.stdout.write(f"{len(results)} scopes")
        failed = sum(result.outcome == "failed" for result in results)
        if failed:
            raise CommandError(f"{failed} consolidations failed; their reflections stay buffered")

    @staticmethod
    def _describe(key: ScopeKey) -> str:
        return f"{key.scope} scope (agent {key.agent_id}, user {key.user_id}, session {key.session_id})"
