from django.conf import settings
from django.db import models
from django.db.models import Q
from pgvector.django import VectorField

from core.safety.sensitive import SensitiveKind

# Full-text search of facts and messages: explicit, so that generated tsvector columns are immutable and queries
# parse a question the way the index parsed the documents.
TEXT_SEARCH_CONFIG = "english"


class TimeStampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class EmbeddingSpace(models.Model):
    """One embedding model at one dimensionality. Vectors live in per-record embedding tables keyed by space, so a
    model change fills a new space beside the active one and switches reads by flipping `status`: the facts and
    messages tables are never rewritten. See docs/architecture.md."""

    class Status(models.TextChoices):
        BUILDING = "building", "building"
        ACTIVE = "active", "active"
        RETIRED = "retired", "retired"

    name = models.CharField(max_length=200, unique=True)
    provider = models.CharField(max_length=50)
    model = models.CharField(max_length=200)
    dimensions = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.BUILDING)
    created_at = models.DateTimeField(auto_now_add=True)
    activated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["status"], condition=Q(status="active"), name="one_active_embedding_space"),
            models.CheckConstraint(condition=Q(dimensions__gt=0, dimensions__lte=2000), name="embedding_dims_in_range"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"


class EmbeddingRecord(models.Model):
    """Base of the tables that hold vectors (fact embeddings, message embeddings). `embedding` has no fixed
    dimensions; each space gets a partial HNSW index on `embedding::vector(<dims>)` (core.embeddings.spaces)."""

    space = models.ForeignKey(EmbeddingSpace, on_delete=models.PROTECT, related_name="+")
    embedding = VectorField()

    class Meta:
        abstract = True


class LLMCall(models.Model):
    """One call to an LLM provider: what for, which model, tokens, latency and outcome. Cost and failure rates per
    agent are read from these rows."""

    class Outcome(models.TextChoices):
        OK = "ok", "ok"
        MALFORMED = "malformed", "malformed reply"
        PROVIDER_ERROR = "provider_error", "provider error"
        RATE_LIMITED = "rate_limited", "rate limited (429)"

    agent = models.ForeignKey(settings.TENANT_MODEL, on_delete=models.CASCADE, null=True, related_name="llm_calls")
    purpose = models.CharField(max_length=50)
    provider = models.CharField(max_length=50)
    model = models.CharField(max_length=200, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    error = models.TextField(blank=True)
    attempt = models.PositiveSmallIntegerField(default=1)
    rule_violations = models.JSONField(
        default=dict,
        blank=True,
        help_text="Of a valid reply: items that broke a rule of the prompt, by rule (e.g. over the word limit, a "
        "question stored as a fact, memory repeated from the injected context); the step dropped or cut them.",
    )
    job_kind = models.CharField(max_length=20, blank=True, help_text="formation or consolidation")
    job_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        verbose_name = "LLM call"
        indexes = [
            models.Index(fields=["agent", "-created_at"], name="llmcall_agent_recent"),
            models.Index(fields=["job_kind", "job_id"], name="llmcall_job"),
        ]

    def __str__(self) -> str:
        return f"{self.purpose} {self.model} {self.outcome}"


class SensitiveDataFinding(models.Model):
    """A secret that formation or an assistant's save_memory call kept out of memory (core/safety/sensitive.py): what
    kind, what was done (withheld: nothing stored; redacted: stored with the value replaced) and in what. Never the
    secret itself. Findings of a formation or consolidation job count once the job succeeded (a failed job stored
    nothing)."""

    class Action(models.TextChoices):
        WITHHELD = "withheld", "withheld"
        REDACTED = "redacted", "redacted"

    class Target(models.TextChoices):
        FACT = "fact", "fact"
        REFLECTION = "reflection", "reflection"
        BLOB = "blob", "blob"
        TOOL = "tool", "save tool"

    agent = models.ForeignKey(settings.TENANT_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=20, choices=SensitiveKind.choices)
    action = models.CharField(max_length=10, choices=Action.choices)
    target = models.CharField(max_length=10, choices=Target.choices)
    job_kind = models.CharField(max_length=20, blank=True, help_text="formation or consolidation")
    job_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "sensitive data finding"
        indexes = [
            models.Index(fields=["agent", "-created_at"], name="sensitivefinding_agent_recent"),
            models.Index(fields=["job_kind", "job_id"], name="sensitivefinding_job"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} {self.action} in a {self.target}"


class JobStatus(models.TextChoices):
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"


class CorpusStatistics(models.Model):
    """Kept BM25 corpus statistics of one searchable scope: how many documents it holds and their total length in
    lexemes. Full-text search reads them instead of counting the scope on every query (docs/architecture.md, "Search
    statistics are kept by the database").

    `corpus` names the document set and what `scope_id` is: `facts.shared` (current facts visible agent-wide; scope:
    the agent), `facts.own` (current user-only facts; scope: the user), `messages` (scope: the user). No foreign
    keys: database triggers on the embedding tables write the changes (core.CorpusStatisticsChange), and a scope whose
    documents are all deleted folds to zero and is removed."""

    corpus = models.CharField(max_length=20)
    space_id = models.BigIntegerField()
    scope_id = models.BigIntegerField()
    documents = models.BigIntegerField(default=0)
    lexemes = models.BigIntegerField(default=0)

    class Meta:
        verbose_name_plural = "corpus statistics"
        constraints = [
            models.UniqueConstraint(fields=["corpus", "space_id", "scope_id"], name="corpus_statistics_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.corpus} {self.scope_id} in space {self.space_id}: {self.documents} documents"


class CorpusStatisticsChange(models.Model):
    """A pending change of CorpusStatistics, appended by the triggers in the writing transaction: writes never wait on
    each other for a shared counter row, and never deadlock over several. Readers add the pending changes to the
    folded rows, so the statistics are exact at every commit; `corpus_statistics_fold` (Celery beat) moves them into
    CorpusStatistics in one statement."""

    corpus = models.CharField(max_length=20)
    space_id = models.BigIntegerField()
    scope_id = models.BigIntegerField()
    documents = models.BigIntegerField()
    lexemes = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["corpus", "space_id", "scope_id"], name="corpus_change_scope")]

    def __str__(self) -> str:
        return f"{self.corpus} {self.scope_id} in space {self.space_id}: {self.documents:+} documents"
