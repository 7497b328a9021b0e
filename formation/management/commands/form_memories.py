from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from agents.models import Agent
from formation.selectors.formation_due import session_formation_due, sessions_with_unformed_messages
from formation.services.formation_runs import sessions_form_memories
from formation.services.formation_triggers import session_unformed_totals


class Command(BaseCommand):
    help = (
        "Form memory (facts and reflections) from messages not formed yet: for one session, a user's sessions, an "
        "agent's sessions, or every session that is due (--due). Runs here, or on the workers with --queue."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--agent", help="the agent's external id")
        parser.add_argument("--user", help="the user's external id (needs --agent)")
        parser.add_argument("--session", help="the session's external id (needs --agent)")
        parser.add_argument(
            "--due", action="store_true", help="only sessions due by the interval or cold-session rules"
        )
        parser.add_argument("--queue", action="store_true", help="queue the work for the Celery workers")
        parser.add_argument("--dry-run", action="store_true", help="list the sessions, form nothing")

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
        if not (agent or due):
            raise CommandError("name an --agent (and optionally --user or --session), or pass --due")
        agent_row = user_row = session_row = None
        if agent:  # --user and --session come with it
            agent_row = Agent.objects.filter(external_id=agent).first()
            if agent_row is None:
                raise CommandError(f"no agent {agent!r}")
            if user:
                user_row = agent_row.users.filter(external_id=user).first()
                if user_row is None:
                    raise CommandError(f"agent {agent!r} has no user {user!r}")
            if session:
                session_row = agent_row.sessions.filter(external_id=session).first()
                if session_row is None:
                    raise CommandError(f"agent {agent!r} has no session {session!r}")
        sessions = list(sessions_with_unformed_messages(agent=agent_row, user=user_row, session=session_row))
        if due:
            now = timezone.now()
            sessions = [each for each in sessions if session_formation_due(session=each, now=now)]
        if dry_run:
            for each in sessions:
                messages, tokens = session_unformed_totals(session=each)
                self.stdout.write(
                    f"  would form {each.agent.external_id}/{each.external_id}: {messages} messages, {tokens} tokens"
                )
            self.stdout.write(f"dry run: {len(sessions)} sessions")
            return
        results = sessions_form_memories(sessions=sessions, queue=queue)
        for result in results:
            where = f"{result.session.agent.external_id}/{result.session.external_id}"
            if result.outcome == "formed":
                self.stdout.write(
                    f"  formed {where}: {result.messages} messages in {result.runs} runs, facts +{result.facts_added} "
                    f"~{result.facts_updated} -{result.facts_deleted}, reflections +{result.reflections_added}"
                )
            elif result.outcome == "failed":
                self.stdout.write(self.style.ERROR(f"  failed {where}: {result.error}"))
            else:
                self.stdout.write(f"  {result.outcome} {where}")
        failed = sum(result.outcome == "failed" for result in results)
        summary = ", ".join(
            f"{sum(r.outcome == outcome for r in results)} {outcome}"
            for outcome in ("formed", "queued", "busy", "waiting", "failed")
            if any(r.outcome == outcome for r in results)
        )
        self.stdout.write(f"{len(results)} sessions: {summary or 'nothing to form'}")
        if failed:
            raise CommandError(f"{failed} sessions failed; their jobs keep the input for replay")
