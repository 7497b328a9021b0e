"""The tenant, below every other app: agents, their API keys, their end users, the audit trail of erasures, and the
operators' keys of the administration API.
Tables keep the names they had in conversations/ and core/ (docs/architecture.md, "Where the apps' lines are")."""

from django.core.exceptions import ValidationError
from django.db import models

from agents.categories import category_settings_errors
from core.models import TimeStampedModel
from core.safety.sensitive import SensitiveDataPolicy
from core.search.rerank import Reranker


class AgentMemoryFromUsers(models.TextChoices):
    """Who may write agent-wide memory (facts and reflections every user of the agent sees) from an end user's words.
    Operators and the API key always may; docs/security.md "Memory poisoning"."""

    REVIEW = "review", "review: held for an operator's decision, not served until approved"
    USER_SCOPE = "user_scope", "never: kept at the scope of the user who said it"
    OPEN = "open", "freely: stored agent-wide (single-user agents only)"


class Agent(TimeStampedModel):
    """A tenant: one deployed assistant. Every other row belongs to exactly one agent."""

    external_id = models.CharField(max_length=200, unique=True)
    name = models.CharField(max_length=200, blank=True)
    rag_enabled = models.BooleanField(default=True, help_text="Agents may search facts (API, tools, chat proxy).")
    always_in_context_enabled = models.BooleanField(
        default=True, help_text="Agents receive the always-in-context block (blobs plus recent reflections)."
    )
    # Per-agent overrides; empty means the deployment's setting of the same name applies.
    formation_msg_interval = models.PositiveIntegerField(null=True, blank=True)
    formation_token_interval = models.PositiveIntegerField(null=True, blank=True)
    cold_after_minutes = models.PositiveIntegerField(null=True, blank=True)
    min_messages_for_formation = models.PositiveIntegerField(null=True, blank=True)
    consolidation_threshold_agent = models.PositiveIntegerField(null=True, blank=True)
    consolidation_threshold_user = models.PositiveIntegerField(null=True, blank=True)
    consolidation_threshold_session = models.PositiveIntegerField(null=True, blank=True)
    blob_word_limit_agent = models.PositiveIntegerField(null=True, blank=True)
    blob_word_limit_user = models.PositiveIntegerField(null=True, blank=True)
    blob_word_limit_session = models.PositiveIntegerField(null=True, blank=True)
    profile_in_context = models.BooleanField(
        default=True, help_text="The always-in-context block includes the user's profile (facts with a key)."
    )
    # Retention caps; empty = no cap (the default). Evicted facts are closed, never destroyed; pinned facts stay.
    max_current_facts_per_user = models.PositiveIntegerField(null=True, blank=True)
    max_current_facts_per_agent = models.PositiveIntegerField(
        null=True, blank=True, help_text="Cap on current agent-wide facts (visible to every user)."
    )
    max_embedded_messages_per_session = models.PositiveIntegerField(null=True, blank=True)
    sensitive_data = models.CharField(
        max_length=10,
        choices=SensitiveDataPolicy.choices,
        default=SensitiveDataPolicy.WITHHOLD,
        help_text="What memory formation and the save tool do with a statement holding a password, key, card or "
        "account number, government id or one-time code (docs/security.md).",
    )
    agent_memory_from_users = models.CharField(
        max_length=10,
        choices=AgentMemoryFromUsers.choices,
        default=AgentMemoryFromUsers.REVIEW,
        help_text="What formation and the assistant's memory tools do with agent-wide memory drawn from an end "
        "user's conversation: every other user of the agent would see it (docs/security.md).",
    )
    reranker = models.CharField(
        max_length=8,
        choices=Reranker.choices,
        default=Reranker.OFF,
        help_text="Reorders the top RERANK_TOP_N of each hybrid fact and turn search after fusion: a rerank server "
        "(RERANK_URL) or the configured LLM (its tokens count against the budget below). Adds its latency to every "
        "search; when it fails, the fused order is kept (docs/operations/runbook.md).",
    )
    # Cost guard; empty means LLM_AGENT_DAILY_TOKEN_BUDGET applies (0 there: no budget).
    llm_daily_token_budget = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        verbose_name="LLM daily token budget",
        help_text="Tokens per UTC day that formation and consolidation may spend for this agent; over it, formation "
        "waits (nothing is lost) until the day ends or the budget is raised. Empty: the deployment's default; 0: none.",
    )

    # What memory is filed under and what it keeps (agents.categories; docs/decisions/0054-per-agent-categories.md).
    memory_categories = models.JSONField(
        default=list,
        blank=True,
        help_text='The agent\'s own categories: a list of {"slug", "name", "description", "examples"}; formation '
        "files statements under them as under the defaults.",
    )
    default_categories_enabled = models.BooleanField(
        default=True,
        help_text="Memory is filed under the default categories too; off: only under the agent's own (and other).",
    )
    categories_never_remembered = models.JSONField(
        default=list,
        blank=True,
        help_text="Slugs of categories formation never stores (health for a sales assistant, say).",
    )
    extraction_instructions = models.TextField(
        blank=True,
        help_text="What to remember and how, in the operator's words: carried into the extraction prompt "
        "(at most 2,000 characters; refused when it reads as an injection or holds a secret).",
    )

    class Meta:
        db_table = "conversations_agent"  # the table kept its name when the model moved here

    def __str__(self) -> str:
        return self.name or self.external_id

    def clean(self) -> None:
        # A form's empty JSON is no categories, not a malformed list.
        self.memory_categories = [] if self.memory_categories in (None, "") else self.memory_categories
        if self.categories_never_remembered in (None, ""):
            self.categories_never_remembered = []
        errors = category_settings_errors(
            memory_categories=self.memory_categories,
            default_categories_enabled=self.default_categories_enabled,
            categories_never_remembered=self.categories_never_remembered,
            extraction_instructions=self.extraction_instructions,
        )
        if errors:
            raise ValidationError(errors)


class AgentAPIKey(models.Model):
    """A secret an agent authenticates with. Only a SHA-256 digest is stored; the key is shown once at creation."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, db_index=True, help_text="First characters, to recognise a key.")
    key_digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "conversations_agentapikey"  # the table kept its name when the model moved here
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name or self.agent})"


class OperatorKey(models.Model):
    """The administration API's credential: an operator's, not an agent's (it manages agents, their keys and their
    webhooks, and reads no memory). Only a SHA-256 digest is stored; the key is shown once at creation. Never accepted
    where an agent key is expected, nor an agent key in its place."""

    name = models.CharField(max_length=100, help_text="Who or what uses it.")
    prefix = models.CharField(max_length=16, db_index=True, help_text="First characters, to recognise a key.")
    key_digest = models.CharField(max_length=64, unique=True)
    created_by = models.CharField(max_length=200, blank=True, help_text="An admin user or a command.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "operator key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"


class EndUser(TimeStampedModel):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="users")
    external_id = models.CharField(max_length=200)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "conversations_enduser"  # the table kept its name when the model moved here
        verbose_name = "end user"
        constraints = [models.UniqueConstraint(fields=["agent", "external_id"], name="enduser_unique_per_agent")]

    def __str__(self) -> str:
        return self.external_id


class ErasureRecord(models.Model):
    """Audit trail of a user's erasure, without the user's content: which agent, a SHA-256 of the agent's and the
    user's external ids (answers "was user X erased?" by hashing X again without keeping X), what was deleted and
    who asked for it."""

    agent = models.ForeignKey(Agent, on_delete=models.SET_NULL, null=True, related_name="+")
    agent_external_id = models.CharField(max_length=200)
    user_external_id_hash = models.CharField(max_length=64, db_index=True)
    deleted_counts = models.JSONField(default=dict, help_text="Rows deleted, per kind.")
    requested_by = models.CharField(max_length=200, help_text="Who asked: an admin user, an API key, a command.")
    erased_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "core_erasurerecord"  # the table kept its name when the model moved here
        indexes = [models.Index(fields=["agent_external_id", "-erased_at"], name="erasure_agent_recent")]

    def __str__(self) -> str:
        return f"erasure in {self.agent_external_id} at {self.erased_at:%Y-%m-%d %H:%M}"
