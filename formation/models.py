"""The formation pipeline's records: formation jobs, retention runs and held memory (the review queue). Tables keep
the names they had in conversations/ (docs/architecture.md, "Where the apps' lines are")."""

from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from core.models import JobStatus


class FormationJob(models.Model):
    """One run of memory formation over a session's messages after its cursor. A failed run keeps its input for
    replay; the cursor does not move, so a later run covers the same messages."""

    class Trigger(models.TextChoices):
        INTERVAL = "interval", "message or token interval"
        COLD = "cold", "session went cold"
        CLOSED = "closed", "session closed"
        EXPLICIT = "explicit", "explicit request"
        SWEEP = "sweep", "sweep of missed work"
        RESUMED = "resumed", "resumed after waiting"

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="formation_jobs")
    trigger = models.CharField(max_length=10, choices=Trigger.choices)
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.RUNNING)
    task_id = models.CharField(max_length=100, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    after_message_id = models.BigIntegerField(null=True, blank=True, help_text="Cursor when the job started.")
    through_message_id = models.BigIntegerField(null=True, blank=True, help_text="Last message the job covered.")
    message_count = models.PositiveIntegerField(default=0)
    facts_added = models.PositiveIntegerField(default=0)
    facts_updated = models.PositiveIntegerField(default=0)
    facts_deleted = models.PositiveIntegerField(default=0)
    facts_unchanged = models.PositiveIntegerField(default=0)
    reflections_added = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    input = models.JSONField(default=dict, blank=True, help_text="Kept when the job fails, for replay.")

    class Meta:
        db_table = "conversations_formationjob"  # the table kept its name when the model moved here
        indexes = [models.Index(fields=["session", "-started_at"], name="formationjob_session_recent")]

    def __str__(self) -> str:
        return f"formation of {self.session} ({self.status})"

    @property
    def duration_seconds(self) -> float | None:
        return (self.finished_at - self.started_at).total_seconds() if self.finished_at else None


class RetentionRun(models.Model):
    """What one retention pass evicted for an agent: facts closed and message vectors dropped."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="retention_runs")
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    facts_closed = models.PositiveIntegerField(default=0)
    message_embeddings_dropped = models.PositiveIntegerField(default=0)

    class Meta:
        db_table = "conversations_retentionrun"  # the table kept its name when the model moved here
        indexes = [models.Index(fields=["agent", "-started_at"], name="retentionrun_agent_recent")]

    def __str__(self) -> str:
        return f"retention of {self.agent} at {self.started_at:%Y-%m-%d %H:%M}"


class HeldMemory(models.Model):
    """A memory that formation or the assistant's tools did not store: agent-wide memory drawn from an end user's
    words, waiting for an operator (the review queue), or content rejected by rule (an instruction to the model).
    Nothing here is served until an operator approves it, which writes the fact or reflection through its service."""

    class Kind(models.TextChoices):
        FACT = "fact", "fact"
        REFLECTION = "reflection", "reflection"

    class Reason(models.TextChoices):
        AGENT_SCOPE_FROM_USER = "agent_scope", "agent-wide memory from an end user"
        INJECTION = "injection", "reads as an instruction to the model"
        PROTECTED = "protected", "would change operator-curated memory"

    class Status(models.TextChoices):
        PENDING = "pending", "pending review"
        APPROVED = "approved", "approved agent-wide"
        KEPT_FOR_USER = "kept_for_user", "kept at the user's scope"
        REJECTED = "rejected", "rejected"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="held_memories")
    user = models.ForeignKey(
        EndUser, on_delete=models.CASCADE, null=True, blank=True, related_name="+", help_text="Who said it."
    )
    session = models.ForeignKey(Session, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    content = models.TextField()
    reason = models.CharField(max_length=12, choices=Reason.choices)
    detail = models.CharField(max_length=300, blank=True, help_text="Which rule or setting held it back.")
    origin = models.CharField(max_length=20, help_text="formation or assistant_tool.")
    status = models.CharField(max_length=14, choices=Status.choices, default=Status.PENDING)
    source_messages = models.ManyToManyField(Message, blank=True, related_name="+")
    relations = models.JSONField(
        null=True,
        blank=True,
        help_text="The relations formation's extractor stated with a held fact (RelationStatement.as_json), written "
        "with the fact when it is approved. Empty when nothing extracted them: the fact is then parsed as one written "
        "without them.",
    )
    created_at = models.DateTimeField(default=timezone.now)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=200, blank=True)
    stored_id = models.BigIntegerField(
        null=True, blank=True, help_text="The fact or reflection written when an operator approved or kept it."
    )

    class Meta:
        db_table = "conversations_heldmemory"  # the table kept its name, and so its source messages' table
        verbose_name = "held memory"
        verbose_name_plural = "held memories (review queue)"
        indexes = [
            models.Index(
                fields=["agent", "created_at"], condition=Q(status="pending"), name="heldmemory_pending_agent"
            ),
            models.Index(fields=["agent", "status", "-created_at"], name="heldmemory_agent_status"),
        ]

    def __str__(self) -> str:
        return self.content[:80]
