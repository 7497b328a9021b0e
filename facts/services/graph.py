"""Writes of the entity graph: entities found by any of their names and given more, relations added once while
current and ended (never deleted) when the fact versions they came from are closed, entities merged and renamed.

Scope follows the facts: a user's fact forms entities and relations of that user, an agent-wide fact of the agent.
Formation writes them inside its final transaction, under the scope's advisory lock (reconciliation takes it), so
two formations of one user never race on an entity's aliases."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from agents.models import Agent, EndUser
from conversations.models import Message
from conversations.selectors.speakers import user_speaker_names
from core.exceptions import ApplicationError
from facts.models import Entity, EntityType, Fact, Relation

USER_ENTITY_NAME = "the user"
# What names the user themself in an extractor's reply and in first-person text.
# Someone known only by their tie to the user until named ("the user's sister").
DESCRIBED_PREFIX = "the user's "
USER_NAMES = frozenset({"user", "the user", "i", "me", "my", "myself"})
MAX_NAME_CHARS = 200
# An external id that reads as a person's name ("Caroline", "Jean-Luc Picard"), not an opaque id ("u-42", an e-mail).
_NAME_LIKE = re.compile(r"^[^\W\d_]+(?:[ '.-]+[^\W\d_]+)*$")
MAX_PREDICATE_CHARS = 100
MAX_VALUE_CHARS = 300


@dataclass(frozen=True)
class EntityMention:
    """An entity as an extractor names it: `name` "user" (or any of USER_NAMES) is the user themself."""

    name: str
    entity_type: str = EntityType.THING
    aliases: tuple[str, ...] = ()

    @property
    def is_user(self) -> bool:
        return entity_name_normalize(self.name) in USER_NAMES


@dataclass(frozen=True)
class RelationStatement:
    """subject --predicate--> object (an entity) or value (a text), as a fact states it."""

    subject: EntityMention
    predicate: str
    object: EntityMention | None = None
    value: str = ""

    def as_json(self) -> dict:
        """The statement as stored beside memory that waits to be written (a fact held for review)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> RelationStatement:
        def mention(item: dict) -> EntityMention:
            return EntityMention(name=item["name"], entity_type=item["entity_type"], aliases=tuple(item["aliases"]))

        return cls(
            subject=mention(data["subject"]),
            predicate=data["predicate"],
            object=mention(data["object"]) if data["object"] else None,
            value=data["value"],
        )


def entity_name_normalize(name: str) -> str:
    """The form aliases are stored and looked up in: lower case, single spaces, no surrounding punctuation."""
    return " ".join(name.lower().split()).strip(" .,;:!?\"'")[:MAX_NAME_CHARS]


def predicate_normalize(predicate: str) -> str:
    """snake_case: "works at" and "Works-At" are one predicate."""
    return re.sub(r"[^a-z0-9]+", "_", predicate.lower()).strip("_")[:MAX_PREDICATE_CHARS]


def _scope(*, agent: Agent, user: EndUser | None) -> Q:
    return Q(agent=agent, user=user, merged_into__isnull=True)


def user_names(*, user: EndUser) -> frozenset[str]:
    """The names the user goes by in conversations, normalised: their external id when it reads as a name, their
    metadata `name`, and the speaker name their own messages carry when they carry one only. Where two people speak
    as one user (a logged group chat, LoCoMo's sessions, which belong to one speaker), neither speaker's name is taken
    from the messages: only the one that is the user's id or name is theirs."""
    metadata = user.metadata if isinstance(user.metadata, dict) else {}  # the admin edits it as free JSON
    named = [user.external_id if _NAME_LIKE.match(user.external_id) else "", metadata.get("name")]
    speakers = user_speaker_names(user=user)
    if len(speakers) == 1:
        named.append(speakers[0])
    names = (entity_name_normalize(name) for name in named if isinstance(name, str))
    return frozenset(name for name in names if name and name not in USER_NAMES)


@transaction.atomic
def user_entity_get_or_create(*, agent: Agent, user: EndUser, names: Iterable[str] = ()) -> Entity:
    """The user themself: one entity per user, what first-person statements and the user's `names` (normalised, see
    user_names) resolve to; it is given those it lacks."""
    entity, created = Entity.objects.get_or_create(
        agent=agent,
        user=user,
        is_user=True,
        defaults={
            "name": USER_ENTITY_NAME,
            "entity_type": EntityType.PERSON,
            "aliases": [*sorted(USER_NAMES - {"my", "myself"}), *sorted(names)],
        },
    )
    missing = [] if created else sorted(set(names) - set(entity.aliases))
    if missing:
        entity.aliases = [*entity.aliases, *missing]
        entity.save(update_fields=["aliases", "updated_at"])
    return entity


@transaction.atomic
def entity_upsert(
    *, agent: Agent, user: EndUser | None, name: str, entity_type: str = EntityType.THING, aliases: Sequence[str] = ()
) -> Entity:
    """The scope's entity known by `name` or any of `aliases` (the oldest when several are), given the names it
    lacked; a new one otherwise. A specific type replaces "thing"; a known type is not changed by a later guess."""
    canonical = " ".join(name.split())[:MAX_NAME_CHARS]
    names = [entity_name_normalize(value) for value in (canonical, *aliases)]
    names = list(dict.fromkeys(value for value in names if value))
    if not names:
        raise ApplicationError("an entity needs a name.", fields={"name": ["empty"]})
    if entity_type not in EntityType.values:
        entity_type = EntityType.THING
    existing = (
        Entity.objects.select_for_update()
        .filter(_scope(agent=agent, user=user), aliases__overlap=names)
        .order_by("pk")
        .first()
    )
    if existing is None:
        return Entity.objects.create(agent=agent, user=user, name=canonical, entity_type=entity_type, aliases=names)
    changed = []
    if existing.name.lower().startswith(DESCRIBED_PREFIX) and not canonical.lower().startswith(DESCRIBED_PREFIX):
        existing.name = canonical  # "the user's sister" is named at last: "Maria"
        changed.append("name")
    missing = [value for value in names if value not in existing.aliases]
    if missing:
        existing.aliases = [*existing.aliases, *missing]
        changed.append("aliases")
    if existing.entity_type == EntityType.THING and entity_type != EntityType.THING:
        existing.entity_type = entity_type
        changed.append("entity_type")
    if changed:
        existing.save(update_fields=[*changed, "updated_at"])
    return existing


@dataclass
class ResolvedEntities:
    """What one run resolved already: entities by scope and mention (a mention resolves the same way twice), and the
    names of each user it met."""

    entities: dict[tuple[int | None, EntityMention], Entity | None] = field(default_factory=dict)
    names: dict[int, frozenset[str]] = field(default_factory=dict)

    def names_of(self, user: EndUser) -> frozenset[str]:
        if user.pk not in self.names:
            self.names[user.pk] = user_names(user=user)
        return self.names[user.pk]


def _mention_resolve(
    *, agent: Agent, user: EndUser | None, mention: EntityMention, resolved: ResolvedEntities
) -> Entity | None:
    """The user's own entity for "I", "the user" and the user's names ("Caroline" in a fact about Caroline, when
    Caroline is the user); in an agent-wide fact nobody is the user. Any other mention is found or made by name."""
    key = (user.pk if user is not None else None, mention)
    if key not in resolved.entities:
        if mention.is_user and user is None:
            resolved.entities[key] = None
        elif user is not None and (mention.is_user or entity_name_normalize(mention.name) in resolved.names_of(user)):
            resolved.entities[key] = user_entity_get_or_create(agent=agent, user=user, names=resolved.names_of(user))
        else:
            resolved.entities[key] = entity_upsert(
                agent=agent, user=user, name=mention.name, entity_type=mention.entity_type, aliases=mention.aliases
            )
    return resolved.entities[key]


@transaction.atomic
def relation_add(
    *,
    subject: Entity,
    predicate: str,
    object_entity: Entity | None = None,
    object_value: str = "",
    source_facts: Sequence[Fact] = (),
    source_messages: Sequence[Message] = (),
    valid_from: datetime | None = None,
) -> Relation:
    """The current relation subject --predicate--> object, created unless it holds already (then it gains the new
    sources): one current row per subject, predicate and object."""
    predicate = predicate_normalize(predicate)
    object_value = "" if object_entity is not None else " ".join(object_value.split())[:MAX_VALUE_CHARS]
    if not predicate:
        raise ApplicationError("a relation needs a predicate.", fields={"predicate": ["empty"]})
    if object_entity is None and not object_value:
        raise ApplicationError("a relation needs an object entity or value.", fields={"object": ["empty"]})
    now = timezone.now()
    relation, created = Relation.objects.get_or_create(
        subject=subject,
        predicate=predicate,
        object_entity=object_entity,
        object_value=object_value,
        valid_to__isnull=True,
        defaults={
            "agent_id": subject.agent_id,
            "user_id": subject.user_id,
            "formed_at": now,
            "valid_from": valid_from or now,
        },
    )
    if created:  # nothing to compare with: the links are inserted without add()'s read of the existing ones
        for link, sources, column in (
            (Relation.source_facts.through, source_facts, "fact_id"),
            (Relation.source_messages.through, source_messages, "message_id"),
        ):
            link.objects.bulk_create([link(relation_id=relation.pk, **{column: source.pk}) for source in sources])
    else:
        relation.source_facts.add(*source_facts)
        relation.source_messages.add(*source_messages)
    return relation


def fact_relations_write(
    *,
    fact: Fact,
    statements: Iterable[RelationStatement],
    source_messages: Sequence[Message],
    resolved: ResolvedEntities | None = None,
) -> list[Relation]:
    """The relations a fact states, in the fact's scope, linked to this version and the messages it came from. A
    statement about the user in an agent-wide fact is dropped: agent-wide memory names no user. `resolved` carries
    the entities found across the facts of one run."""
    agent, user = fact.agent, fact.user
    resolved = ResolvedEntities() if resolved is None else resolved
    written = []
    for statement in statements:
        subject = _mention_resolve(agent=agent, user=user, mention=statement.subject, resolved=resolved)
        target = (
            _mention_resolve(agent=agent, user=user, mention=statement.object, resolved=resolved)
            if statement.object is not None
            else None
        )
        if subject is None or (statement.object is not None and target is None):
            continue
        if target is not None and target.pk == subject.pk:
            continue  # "Maria is Maria": an alias, not a relation
        written.append(
            relation_add(
                subject=subject,
                predicate=statement.predicate,
                object_entity=target,
                object_value=statement.value,
                source_facts=[fact],
                source_messages=source_messages,
                valid_from=fact.valid_from,
            )
        )
    return written


_CLOSE_FOR_FACT_SQL = """
UPDATE facts_relation r SET valid_to = %(now)s, closed_reason = %(reason)s
WHERE r.valid_to IS NULL
  AND r.id IN (SELECT relation_id FROM facts_relation_source_facts WHERE fact_id = %(fact)s)
  AND NOT EXISTS (
      SELECT 1 FROM facts_relation_source_facts link JOIN facts_fact f ON f.id = link.fact_id
      WHERE link.relation_id = r.id AND f.id <> %(fact)s AND f.valid_to IS NULL)
"""


def relations_close_for_fact(*, fact: Fact, reason: str) -> int:
    """End the validity of the current relations that `fact` (a version being superseded, closed or deleted) stated
    and that no other current fact version states. Called by facts.fact_close and facts.fact_supersede, so every
    path that closes a version keeps the graph in step. Returns how many relations ended."""
    with connection.cursor() as cursor:
        cursor.execute(
            _CLOSE_FOR_FACT_SQL,
            {"now": fact.valid_to or timezone.now(), "reason": reason[:300], "fact": fact.pk},
        )
        return cursor.rowcount


def relations_carry_to_successor(*, fact: Fact, successor: Fact) -> None:
    """A successor that says the same (a new scope, a moved owner) states the same relations: they stay current."""
    through = Relation.source_facts.through
    through.objects.bulk_create(
        [
            through(relation_id=relation_id, fact_id=successor.pk)
            for relation_id in Relation.objects.filter(source_facts=fact, valid_to__isnull=True).values_list(
                "pk", flat=True
            )
        ],
        ignore_conflicts=True,
    )


def relations_erase_for_facts(*, fact_ids: Sequence[int]) -> int:
    """Hard-delete the relations that only the given fact versions stated (fact erasure: what must not be kept even
    as history); relations other facts state keep those. Returns how many were deleted."""
    stated = Relation.objects.filter(source_facts__in=fact_ids).values("pk")
    only_these = Relation.objects.filter(pk__in=stated).exclude(
        pk__in=Relation.source_facts.through.objects.exclude(fact_id__in=fact_ids).values("relation_id")
    )
    _, per_model = only_these.delete()
    return per_model.get(Relation._meta.label, 0)


@transaction.atomic
def entity_rename(*, entity: Entity, name: str) -> Entity:
    """A new canonical name; the old one stays an alias, so what was said before still finds the entity."""
    canonical = " ".join(name.split())[:MAX_NAME_CHARS]
    if not canonical:
        raise ApplicationError("an entity needs a name.", fields={"name": ["empty"]})
    entity = Entity.objects.select_for_update().get(pk=entity.pk)
    entity.name = canonical
    normalised = entity_name_normalize(canonical)
    if normalised not in entity.aliases:
        entity.aliases = [*entity.aliases, normalised]
    entity.save(update_fields=["name", "aliases", "updated_at"])
    return entity


@transaction.atomic
def entity_merge(*, kept: Entity, merged: Entity) -> Entity:
    """`merged` is the same someone as `kept`: its aliases and relations move to `kept`, a relation `kept` already
    has gains the merged one's sources (the merged one ends, "merged"), and `merged` stays as the record of the merge
    (merged_into) with no aliases. Both must be current entities of one scope; the user's own entity is only ever
    the one kept."""
    kept, merged = (Entity.objects.select_for_update().get(pk=entity.pk) for entity in (kept, merged))
    if kept.pk == merged.pk:
        raise ApplicationError("an entity cannot be merged into itself.", fields={"merged": ["same entity"]})
    if (kept.agent_id, kept.user_id) != (merged.agent_id, merged.user_id):
        raise ApplicationError("entities of different scopes cannot be merged.", fields={"merged": ["other scope"]})
    if kept.merged_into_id or merged.merged_into_id:
        raise ApplicationError("this entity was already merged.", fields={"merged": ["already merged"]})
    if merged.is_user:
        raise ApplicationError(
            "merge other entities into the user's own, not it into them.", fields={"merged": ["user"]}
        )
    kept.aliases = list(dict.fromkeys([*kept.aliases, *merged.aliases]))
    if kept.entity_type == EntityType.THING:
        kept.entity_type = merged.entity_type
    kept.save(update_fields=["aliases", "entity_type", "updated_at"])
    merged.aliases, merged.merged_into = [], kept
    merged.save(update_fields=["aliases", "merged_into", "updated_at"])
    now = timezone.now()
    moving = Relation.objects.filter(Q(subject=merged) | Q(object_entity=merged)).order_by("pk")
    for relation in moving.prefetch_related("source_facts", "source_messages"):
        subject = kept if relation.subject_id == merged.pk else relation.subject
        target = kept if relation.object_entity_id == merged.pk else relation.object_entity
        twin = (
            Relation.objects.filter(
                subject=subject,
                predicate=relation.predicate,
                object_entity=target,
                object_value=relation.object_value,
                valid_to__isnull=True,
            )
            .exclude(pk=relation.pk)
            .first()
            if relation.valid_to is None
            else None
        )
        if twin is not None:
            twin.source_facts.add(*relation.source_facts.all())
            twin.source_messages.add(*relation.source_messages.all())
            relation.valid_to, relation.closed_reason = now, f"merged into relation {twin.pk}"
            relation.save(update_fields=["valid_to", "closed_reason"])
            continue
        relation.subject, relation.object_entity = subject, target
        relation.save(update_fields=["subject", "object_entity"])
    return kept
