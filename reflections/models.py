from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents.models import Agent, EndUser
from conversations.models import Session
from core.models import JobStatus


class MemoryScope(models.TextChoices):
    AGENT = "agent", "agent"
    USER = "user", "user"
    SESSION = "session", "session"


# agent scope: no user, no session; user scope: a user, no session; session scope: user and session.
SCOPE_KEY_CONSTRAINT = (
    (Q(scope=MemoryScope.AGENT) & Q(user__isnull=True) & Q(session__isnull=True))
    | (Q(scope=MemoryScope.USER) & Q(user__isnull=False) & Q(session__isnull=True))
    | (Q(scope=MemoryScope.SESSION) & Q(user__isnull=False) & Q(session__isnull=False))
)


class ConsolidatedMemory(models.Model):
    """The current consolidated blob of one scope (one per agent, per (agent, user), per session).
    Each change moves the previous content to ConsolidatedMemoryVersion."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="consolidated_memories")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    scope = models.CharField(max_length=10, choices=MemoryScope.choices)
    content = models.TextField(blank=True)
    curated_content = models.TextField(
        blank=True,
        help_text="The part an operator wrote (the admin, the API key): consolidation keeps it word for word at the "
        "top of the blob and writes only after it.",
    )
    word_limit = models.PositiveIntegerField()
    version = models.PositiveIntegerField(default=1)
    change_reason = models.CharField(max_length=300, blank=True)
    last_consolidated_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Session blobs are the session's rolling summary: the last message it covers decides when it is due again.
    summarized_through_message_id = models.BigIntegerField(null=True, blank=True)
    is_rule_based = models.BooleanField(
        default=False, help_text="Written by rules because the LLM failed; the next LLM summary replaces it."
    )

    class Meta:
        verbose_name = "consolidated memory"
        verbose_name_plural = "consolidated memories"
        constraints = [
            models.CheckConstraint(condition=SCOPE_KEY_CONSTRAINT, name="consolidated_scope_key_valid"),
            models.UniqueConstraint(
                fields=["agent", "scope", "user", "session"], nulls_distinct=False, name="consolidated_one_per_scope"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope} blob v{self.version}"


class ConsolidatedMemoryVersion(models.Model):
    """A past version of a consolidated blob, kept when a newer one replaced it."""

    memory = models.ForeignKey(ConsolidatedMemory, on_delete=models.CASCADE, related_name="past_versions")
    version = models.PositiveIntegerField()
    content = models.TextField(blank=True)
    curated_content = models.TextField(blank=True)
    word_limit = models.PositiveIntegerField()
    change_reason = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(help_text="When this version was written.")
    replaced_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "version"], name="consolidated_version_unique")]

    def __str__(self) -> str:
        return f"{self.memory} (v{self.version})"


class Reflection(models.Model):
    """An interpreted note in a scope's buffer; always in context until consolidation absorbs it into the blob."""

    class Source(models.TextChoices):
        FORMATION = "formation", "formation"
        MANUAL = "manual", "manual"
        IMPORT = "import", "import"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="reflections")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, null=True, blank=True, related_name="reflections")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, null=True, blank=True, related_name="reflections")
    scope = models.CharField(max_length=10, choices=MemoryScope.choices)
    content = models.TextField()
    source = models.CharField(max_length=10, choices=Source.choices, default=Source.FORMATION)
    source_session = models.ForeignKey(Session, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    absorbed = models.BooleanField(default=False)
    absorbed_at = models.DateTimeField(null=True, blank=True)
    consolidated_into = models.ForeignKey(
        ConsolidatedMemory, on_delete=models.SET_NULL, null=True, blank=True, related_name="absorbed_reflections"
    )
    consolidated_into_version = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=SCOPE_KEY_CONSTRAINT, name="reflection_scope_key_valid")]
        indexes = [
            models.Index(
                fields=["agent", "scope", "user", "session", "created_at"],
                condition=Q(absorbed=False),
                name="reflection_buffer",
            )
        ]

    def __str__(self) -> str:
        return self.content[:80]


class ConsolidationJob(models.Model):
    """One consolidation of a scope's buffered reflections into its blob."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="consolidation_jobs")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    session = models.ForeignKey(Session, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    scope = models.CharField(max_length=10, choices=MemoryScope.choices)
    status = models.CharField(max_length=10, choices=JobStatus.choices, default=JobStatus.RUNNING)
    task_id = models.CharField(max_length=100, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    reflections_count = models.PositiveIntegerField(default=0)
    memory = models.ForeignKey(ConsolidatedMemory, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    produced_version = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        indexes = [models.Index(fields=["agent", "-started_at"], name="consolidationjob_agent_recent")]

    def __str__(self) -> str:
        return f"consolidation of {self.scope} ({self.status})"

    @property
    def duration_seconds(self) -> float | None:
        return (self.finished_at - self.started_at).total_seconds() if self.finished_at else None
