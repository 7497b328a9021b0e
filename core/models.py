from django.db import models
from django.db.models import Q
from pgvector.django import VectorField


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
