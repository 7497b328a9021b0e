"""The entity graph: the people, places, organisations, things and events the facts name, and the relations between
them, each relation linked to the fact versions and messages it came from and valid while they are current."""

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Replace

from agents.categories import MAX_CATEGORY_SLUG_LENGTH
from agents.models import Agent, EndUser
from conversations.models import Message
from core.models import TEXT_SEARCH_CONFIG
from facts.models.facts import Fact
from facts.world_time import WorldTimeFields, world_time_constraints


class EntityType(models.TextChoices):
    PERSON = "person", "person"
    PLACE = "place", "place"
    ORGANISATION = "organisation", "organisation"
    THING = "thing", "thing"
    EVENT = "event", "event"


class Entity(models.Model):
    """Someone or something the memory names, in the same scope as the facts it came from: one user's (user set) or
    the agent's (user empty). `aliases` holds every lower-cased name it is known by, the canonical name included, so
    a lookup by any of them is one GIN probe. The user themself is the entity with `is_user`: one per user, what
    "I", "me" and "the user" resolve to. A merged entity stays as a record of the merge (merged_into), without
    aliases or relations."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="entities")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="entities", null=True, blank=True)
    name = models.CharField(max_length=200)
    entity_type = models.CharField(max_length=20, choices=EntityType.choices, default=EntityType.THING)
    aliases = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    name_vector = models.GeneratedField(
        expression=SearchVector("name", config=TEXT_SEARCH_CONFIG), output_field=SearchVectorField(), db_persist=True
    )
    is_user = models.BooleanField(default=False, help_text="The end user themself (first-person statements).")
    merged_into = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="merged_entities"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "entities"
        constraints = [
            models.UniqueConstraint(fields=["user"], condition=Q(is_user=True), name="entity_one_self_per_user"),
            models.CheckConstraint(condition=Q(is_user=False) | Q(user__isnull=False), name="entity_self_has_user"),
        ]
        indexes = [
            # Lookups by any name within one scope (btree_gin: the scope's id, then the aliases).
            GinIndex(fields=["agent", "user", "aliases"], name="entity_scope_aliases"),
            models.Index(fields=["agent", "user", "name"], name="entity_scope_name"),
        ]

    def __str__(self) -> str:
        return self.name


class Relation(WorldTimeFields):
    """subject --predicate--> object entity, or an object value ("works_as" -> "nurse"). Valid from when it was
    formed until the fact versions it came from are all closed (valid_to, closed_reason): a relation is ended, never
    deleted, so the graph answers what memory held at any time. held_from/held_until (WorldTimeFields): when it held
    in the world, the world time of the fact that states it. `user` copies the subject's scope."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="relations")
    user = models.ForeignKey(EndUser, on_delete=models.CASCADE, related_name="relations", null=True, blank=True)
    subject = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="relations_as_subject")
    predicate = models.CharField(max_length=100)
    object_entity = models.ForeignKey(
        Entity, on_delete=models.CASCADE, related_name="relations_as_object", null=True, blank=True
    )
    object_value = models.CharField(max_length=300, blank=True)
    # What the relation says besides its subject ("camped_at" reads "camped at", and the value): a hub's relations
    # are picked by the query's other words through it (facts.selectors.graph_search).
    said_vector = models.GeneratedField(
        expression=SearchVector(
            Replace(F("predicate"), Value("_"), Value(" ")), "object_value", config=TEXT_SEARCH_CONFIG
        ),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    formed_at = models.DateTimeField()
    valid_from = models.DateTimeField()
    valid_to = models.DateTimeField(null=True, blank=True, help_text="Empty while the relation holds.")
    closed_reason = models.CharField(max_length=300, blank=True)
    category = models.CharField(
        max_length=MAX_CATEGORY_SLUG_LENGTH, blank=True, help_text="The category of the fact that states it."
    )
    source_facts = models.ManyToManyField(Fact, blank=True, related_name="relations")
    source_messages = models.ManyToManyField(Message, blank=True, related_name="relations")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(Q(object_entity__isnull=False) & Q(object_value=""))
                | (Q(object_entity__isnull=True) & ~Q(object_value="")),
                name="relation_object_entity_or_value",
            ),
            models.UniqueConstraint(
                fields=["subject", "predicate", "object_entity", "object_value"],
                condition=Q(valid_to__isnull=True),
                nulls_distinct=False,
                name="relation_current_unique",
            ),
            *world_time_constraints("relation"),
        ]
        indexes = [
            models.Index(fields=["subject", "valid_from"], name="relation_subject"),
            models.Index(fields=["object_entity", "valid_from"], name="relation_object"),
            models.Index(fields=["agent", "user"], name="relation_scope"),
            # A hub's relations that say given words, from either end (btree_gin: the end's id, then the vector).
            GinIndex(fields=["subject", "said_vector"], name="relation_subject_said"),
            GinIndex(fields=["object_entity", "said_vector"], name="relation_object_said"),
        ]

    def __str__(self) -> str:
        target = self.object_entity.name if self.object_entity is not None else self.object_value
        return f"{self.subject.name} {self.predicate} {target}"

    @property
    def is_current(self) -> bool:
        return self.valid_to is None
