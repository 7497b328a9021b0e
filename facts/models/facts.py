import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q

from agents.categories import MAX_CATEGORY_SLUG_LENGTH
from agents.models import Agent, EndUser
from conversations.models import Message, Session
from core.models import TEXT_SEARCH_CONFIG, EmbeddingRecord
from facts.world_time import WorldTimeFields, world_time_constraints

PROFILE_KEY_VALIDATOR = RegexValidator(
    r"^[a-z][a-z0-9_]{0,99}$", "a profile key is lowercase letters, digits and underscores, like home_city."
)


class FactScope(models.TextChoices):
    USER = "user", "user"
    AGENT = "agent", "agent"


class FactWriter(models.TextChoices):
    """Who wrote a fact version. Operators' versions (the admin, the API key) are curated: formation and the
    assistant's tools never close, update or supersede them (docs/security.md "Memory poisoning")."""

    FORMATION = "formation", "formation (from a conversation)"
    ASSISTANT = "assistant", "the assistant's memory tools"
    OPERATOR = "operator", "an operator in the admin"
    API = "api", "the API key (curation endpoints)"
    IMPORT = "import", "import from another system"


CURATED_WRITERS = (FactWriter.OPERATOR, FactWriter.API)


class Fact(WorldTimeFields):
    """One version of an atomic, objective statement. A change never overwrites: the old version is closed
    (valid_to, superseded_by, closed_reason) and a new row carries the same lineage with version + 1.
    A fact is visible to every conversation of its agent when `agent` is in its scopes, otherwise only to its user.
    Two clocks: valid_from/valid_to say when memory held this version (`as_of`); held_from/held_until
    (WorldTimeFields) when its statement held in the world (`holds_at`)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="facts")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="facts", null=True, blank=True)
    scopes = ArrayField(models.CharField(max_length=10, choices=FactScope.choices), size=2)
    content = models.TextField()
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of the normalised content.")
    search_vector = models.GeneratedField(
        expression=SearchVector("content", config=TEXT_SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    lineage = models.UUIDField(default=uuid.uuid4, db_index=True, help_text="Shared by all versions of a fact.")
    version = models.PositiveIntegerField(default=1)
    formed_at = models.DateTimeField(help_text="When this version was written.")
    valid_from = models.DateTimeField()
    valid_to = models.DateTimeField(null=True, blank=True, help_text="Empty while this version is current.")
    refers_to = models.DateField(
        null=True, blank=True, help_text='The day the content names ("last Saturday"), resolved when it was formed.'
    )
    superseded_by = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="supersedes"
    )
    change_reason = models.CharField(max_length=300, blank=True, help_text="Why this version was written.")
    closed_reason = models.CharField(max_length=300, blank=True, help_text="Why this version was closed.")
    source_session = models.ForeignKey(Session, on_delete=models.SET_NULL, null=True, blank=True, related_name="facts")
    source_messages = models.ManyToManyField(Message, blank=True, related_name="facts")
    closed_by_messages = models.ManyToManyField(Message, blank=True, related_name="closed_facts")
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    access_count = models.PositiveIntegerField(default=0)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    # A profile attribute ("home_city", "employer"): a new value for the same user and key supersedes the old one.
    key = models.CharField(max_length=100, blank=True, validators=[PROFILE_KEY_VALIDATOR])
    pinned = models.BooleanField(default=False, help_text="Pinned by an operator: retention never evicts it.")
    written_by = models.CharField(max_length=10, choices=FactWriter.choices, default=FactWriter.FORMATION)
    expires_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="From this time the fact leaves search, the context block and the bundle; retention then closes it.",
    )
    # What the statement is about (agents.categories), and the value it gives in that category, made canonical within
    # it ("pottery" for "pottery class" and "making pots"): the profile's entries and list questions read them.
    category = models.CharField(
        max_length=MAX_CATEGORY_SLUG_LENGTH, blank=True, help_text="Its category; empty: formed before categories."
    )
    category_value = models.CharField(
        max_length=200, blank=True, help_text="What it says in its category, canonical: one profile entry per value."
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(scopes__contained_by=[FactScope.USER, FactScope.AGENT]) & Q(scopes__len__gte=1),
                name="fact_scopes_valid",
            ),
            # The user is the fact's owner exactly when the fact is user-scoped.
            models.CheckConstraint(
                condition=(Q(scopes__contains=[FactScope.USER]) & Q(user__isnull=False))
                | (~Q(scopes__contains=[FactScope.USER]) & Q(user__isnull=True)),
                name="fact_user_scope_has_user",
            ),
            models.UniqueConstraint(
                fields=["agent", "user", "content_hash"],
                condition=Q(valid_to__isnull=True),
                nulls_distinct=False,
                name="fact_current_content_unique_per_scope",
            ),
            models.UniqueConstraint(fields=["lineage", "version"], name="fact_lineage_version_unique"),
            *world_time_constraints("fact"),
            models.UniqueConstraint(
                fields=["agent", "user", "key"],
                condition=Q(valid_to__isnull=True) & ~Q(key=""),
                nulls_distinct=False,
                name="fact_current_key_unique_per_scope",
            ),
        ]
        indexes = [
            GinIndex(fields=["search_vector"], name="fact_search_vector_gin"),
            # Full-text matches of one scope in one index scan (btree_gin), current versions only: the agent's
            # facts visible agent-wide, and one user's own. Built without fastupdate: a search never scans a
            # pending list, and facts are written at formation's pace, not ingestion's.
            GinIndex(
                fields=["agent", "search_vector"],
                condition=Q(valid_to__isnull=True) & Q(scopes__contains=[FactScope.AGENT]),
                fastupdate=False,
                name="fact_shared_current_text",
            ),
            GinIndex(
                fields=["user", "search_vector"],
                condition=Q(valid_to__isnull=True) & ~Q(scopes__contains=[FactScope.AGENT]),
                fastupdate=False,
                name="fact_own_current_text",
            ),
            GinIndex(fields=["tags"], name="fact_tags_gin"),
            models.Index(
                fields=["agent", "user", "-formed_at"], condition=Q(valid_to__isnull=True), name="fact_current_scope"
            ),
            models.Index(fields=["agent", "user", "valid_from"], name="fact_scope_history"),
            # A person's memory by topic: the profile and list questions read one scope's current facts of a category.
            models.Index(
                fields=["agent", "user", "category"],
                condition=Q(valid_to__isnull=True) & ~Q(category=""),
                name="fact_current_category",
            ),
            # Retention's read: the current facts whose expiry has passed.
            models.Index(
                fields=["expires_at"],
                condition=Q(valid_to__isnull=True) & Q(expires_at__isnull=False),
                name="fact_current_expiring",
            ),
        ]

    def __str__(self) -> str:
        return self.content[:80]

    @property
    def is_current(self) -> bool:
        return self.valid_to is None

    @property
    def is_curated(self) -> bool:
        return self.written_by in CURATED_WRITERS

    @property
    def restricted_to_user_id(self) -> int | None:
        """The only user who may retrieve this fact, or None when it is visible in every conversation."""
        return None if FactScope.AGENT in self.scopes else self.user_id


class FactEmbedding(EmbeddingRecord):
    """A fact version's vector in one embedding space: the search row of the fact. `agent` and `restricted_to_user`
    copy the fact's visibility (immutable per version: the user for a user-only fact, empty for one visible
    agent-wide), and `valid_from`, `valid_to`, `search_lexemes` and `expires_at` its validity, the length of its
    full-text vector and its expiry, so that a filtered vector scan, exact or HNSW, applies the caller's scope, the
    as-of date and the expiry on this table alone. The database keeps the last four in step with the fact (triggers
    of migration facts 0004, and of the expiry's migration; they also keep core.CorpusStatistics)."""

    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="embeddings")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+", db_index=False)
    restricted_to_user = models.ForeignKey(
        EndUser, on_delete=models.CASCADE, related_name="+", null=True, db_index=False
    )
    valid_from = models.DateTimeField(null=True, editable=False, help_text="The fact's, copied by the database.")
    valid_to = models.DateTimeField(null=True, editable=False, help_text="The fact's, copied by the database.")
    search_lexemes = models.PositiveIntegerField(
        default=0, editable=False, help_text="Lexemes in the fact's full-text vector, copied by the database."
    )
    expires_at = models.DateTimeField(null=True, editable=False, help_text="The fact's, copied by the database.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["fact", "space"], name="fact_embedding_unique")]
        indexes = [models.Index(fields=["space", "agent", "restricted_to_user"], name="fact_embedding_scope")]


class ReferenceDocument(models.Model):
    """A text the agent always has available (a handbook, a product sheet). It is chunked and embedded; a newly
    extracted fact that only restates it is not stored as memory."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="reference_documents")
    title = models.CharField(max_length=300)
    content = models.TextField()
    content_hash = models.CharField(max_length=64)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "content_hash"], name="reference_document_unique_content")
        ]

    def __str__(self) -> str:
        return self.title


class ReferenceChunk(models.Model):
    document = models.ForeignKey(ReferenceDocument, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    content = models.TextField()
    normalized = models.TextField(help_text="Lower-cased, whitespace-folded content for substring checks.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["document", "index"], name="reference_chunk_unique_index")]

    def __str__(self) -> str:
        return f"{self.document} #{self.index}"


class ReferenceChunkEmbedding(EmbeddingRecord):
    chunk = models.ForeignKey(ReferenceChunk, on_delete=models.CASCADE, related_name="embeddings")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+", db_index=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["chunk", "space"], name="reference_chunk_embedding_unique")]
        indexes = [models.Index(fields=["space", "agent"], name="refchunk_embedding_agent")]
