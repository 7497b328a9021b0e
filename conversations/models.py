from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from agents.models import Agent, EndUser
from core.models import TEXT_SEARCH_CONFIG, EmbeddingRecord


class Session(models.Model):
    class FormationStatus(models.TextChoices):
        IDLE = "idle", "idle"
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        FAILED = "failed", "failed"
        WAITING = "waiting", "waiting (budget or provider)"

    class WaitingReason(models.TextChoices):
        AGENT_BUDGET = "agent_budget", "the agent's daily LLM token budget is spent"
        GLOBAL_BUDGET = "global_budget", "the deployment's daily LLM token budget is spent"
        PROVIDER = "provider", "the LLM provider is failing (circuit breaker open)"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="sessions")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="sessions")
    external_id = models.CharField(max_length=200)
    started_at = models.DateTimeField(default=timezone.now)
    last_activity_at = models.DateTimeField(default=timezone.now)
    closed_at = models.DateTimeField(null=True, blank=True)
    message_count = models.PositiveIntegerField(default=0)
    token_count = models.PositiveBigIntegerField(default=0)
    # Formation's state of the session, written by formation's services alone (tests/test_architecture.py): it works on
    # messages with id > formed_through_message_id and moves the cursor only on commit.
    formed_through_message_id = models.BigIntegerField(null=True, blank=True)
    formation_status = models.CharField(max_length=10, choices=FormationStatus.choices, default=FormationStatus.IDLE)
    formation_queued_at = models.DateTimeField(
        null=True, blank=True, help_text="When formation was last queued or claimed; the sweep re-queues lost work."
    )
    last_formed_at = models.DateTimeField(null=True, blank=True)
    formation_waiting_reason = models.CharField(
        max_length=20, choices=WaitingReason.choices, blank=True, help_text="Why formation waits (status 'waiting')."
    )
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["agent", "external_id"], name="session_unique_per_agent")]
        indexes = [
            models.Index(fields=["user", "-last_activity_at"], name="session_user_activity"),
            models.Index(fields=["formation_status", "last_activity_at"], name="session_formation_due"),
        ]

    def __str__(self) -> str:
        return self.external_id


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user", "user"
        ASSISTANT = "assistant", "assistant"
        TOOL = "tool", "tool"
        SYSTEM = "system", "system"
        OTHER = "other", "other"

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=10, choices=Role.choices)
    content = models.TextField()
    token_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now, help_text="When it was said; an import may set it.")
    stored_at = models.DateTimeField(auto_now_add=True)
    # NULL, not "", for "no key": the per-session unique constraint must ignore messages without one.
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["session", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="message_idempotency_key_unique_per_session",
            )
        ]
        indexes = [models.Index(fields=["session", "id"], name="message_session_cursor")]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"


class MessageEmbedding(EmbeddingRecord):
    """A message's vector in one embedding space, and the text it was embedded from, for turn-level retrieval:
    both signals read this one row. agent/user/session copy the message's (immutable) owners so that search filters
    on this table alone and can use its indexes. `search_text` is what conversations.services.message_embeddings
    renders (the message with its speaker, after the previous turn); its full-text vector is stored with it."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="embeddings")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+", db_index=False)
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="+", db_index=False)
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="+", db_index=False)
    search_text = models.TextField(default="", help_text="What was embedded and is full-text searched.")
    search_vector = models.GeneratedField(
        expression=SearchVector("search_text", config=TEXT_SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    refers_to = models.DateField(
        null=True,
        blank=True,
        help_text='The day the message\'s text names ("yesterday"), resolved against when it was said.',
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["message", "space"], name="message_embedding_unique")]
        indexes = [
            models.Index(fields=["space", "user"], name="message_embedding_space_user"),
            # One user's full-text matches in one index scan (btree_gin). Messages are written at ingestion's pace:
            # a small pending list keeps inserts cheap and bounds what a search scans of it.
            GinIndex(
                fields=["user", "search_vector"],
                fastupdate=True,
                gin_pending_list_limit=256,
                name="message_embedding_user_text",
            ),
        ]
