"""Writes of the entity graph: entities found by any of their names and given more, relations added once while
current and ended (never deleted) when the fact versions they came from are closed, entities merged and renamed.

Scope follows the facts: a user's fact forms entities and relations of that user, an agent-wide fact of the agent.
Formation writes them inside its final transaction, under the scope's advisory lock (reconciliation takes it), so
two formations of one user never race on an entity's aliases."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

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


def _upsert_names(*, name: str, aliases: Sequence[str]) -> tuple[str, list[str]]:
    """The canonical name and every name an entity is to be known by (normalised, the name first)."""
    canonical = " ".join(name.split())[:MAX_NAME_CHARS]
    names = [entity_name_normalize(value) for value in (canonical, *aliases)]
    names = list(dict.fromkeys(value for value in names if value))
    if not names:
        raise ApplicationError("an entity needs a name.", fields={"name": ["empty"]})
    return canonical, names


def _entity_extend(*, entity: Entity, canonical: str, names: list[str], entity_type: str) -> list[str]:
    """Gives a found entity what a new mention says of it; returns the fields changed. A specific type replaces
    "thing"; a known type is not changed by a later guess."""
    changed = []
    if entity.name.lower().startswith(DESCRIBED_PREFIX) and not canonical.lower().startswith(DESCRIBED_PREFIX):
        entity.name = canonical  # "the user's sister" is named at last: "Maria"
        changed.append("name")
    missing = [value for value in names if value not in entity.aliases]
    if missing:
        entity.aliases = [*entity.aliases, *missing]
        changed.append("aliases")
    if entity.entity_type == EntityType.THING and entity_type != EntityType.THING:
        entity.entity_type = entity_type
        changed.append("entity_type")
    return changed


def _known_type(entity_type: str) -> str:
    return entity_type if entity_type in EntityType.values else EntityType.THING


def _relation_values(*, predicate: str, object_entity: Entity | None, object_value: str) -> tuple[str, str]:
    """The predicate and object value as stored (normalised), or an ApplicationError for a relation without them."""
    predicate = predicate_normalize(predicate)
    object_value = "" if object_entity is not None else " ".join(object_value.split())[:MAX_VALUE_CHARS]
    if not predicate:
        raise ApplicationError("a relation needs a predicate.", fields={"predicate": ["empty"]})
    if object_entity is None and not object_value:
        raise ApplicationError("a relation needs an object entity or value.", fields={"object": ["empty"]})
    return predicate, object_value


@dataclass(frozen=True)
class StatedRelations:
    """The relations one fact version states, and the messages they came from."""

    fact: Fact
    statements: Sequence[RelationStatement]
    source_messages: Sequence[Message] = ()


class _ScopeEntities:
    """One scope's entities that a batch's mentions can name, read in one locked statement; each mention is found or
    created in memory, one after the other (the oldest entity known by any of its names, given the names it lacked;
    a specific type replaces "thing", a known type is not changed by a later guess), and what changed is written in
    two statements at the end."""

    def __init__(self, *, agent: Agent, user: EndUser | None, names: set[str], user_entity: Entity | None) -> None:
        self.agent, self.user = agent, user
        # Aliases only grow with the mentions' own names: an entity no name of the batch finds is never found.
        self.known = list(
            Entity.objects.select_for_update()
            .filter(_scope(agent=agent, user=user), aliases__overlap=sorted(names))
            .order_by("pk")
        )
        if user_entity is not None:
            self.known = [user_entity if entity.pk == user_entity.pk else entity for entity in self.known]
        self.created: list[Entity] = []
        self.changed: dict[int, Entity] = {}
        self.changed_fields: set[str] = set()

    def upsert(self, mention: EntityMention) -> Entity:
        canonical, names = _upsert_names(name=mention.name, aliases=mention.aliases)
        entity_type = _known_type(mention.entity_type)
        existing = next((entity for entity in self.known if not set(names).isdisjoint(entity.aliases)), None)
        if existing is None:
            entity = Entity(agent=self.agent, user=self.user, name=canonical, entity_type=entity_type, aliases=names)
            self.known.append(entity)
            self.created.append(entity)
            return entity
        changed = _entity_extend(entity=existing, canonical=canonical, names=names, entity_type=entity_type)
        if changed and existing.pk is not None:
            self.changed[existing.pk] = existing
            self.changed_fields.update(changed)
        return existing

    def save(self) -> None:
        Entity.objects.bulk_create(self.created)
        if self.changed:
            now = timezone.now()
            for entity in self.changed.values():
                entity.updated_at = now
            Entity.objects.bulk_update(list(self.changed.values()), [*sorted(self.changed_fields), "updated_at"])


class _UserMentions:
    """Which mentions of a batch are the user: "I" and "the user", and the user's own names ("Caroline" in a fact about
    Caroline, when Caroline is the user: user_names, read once per user); in an agent-wide fact nobody is the user."""

    def __init__(self) -> None:
        self.names: dict[int, frozenset[str]] = {}

    def names_of(self, user: EndUser) -> frozenset[str]:
        if user.pk not in self.names:
            self.names[user.pk] = user_names(user=user)
        return self.names[user.pk]

    def is_the_user(self, fact: Fact, mention: EntityMention) -> bool:
        if mention.is_user:
            return True
        return fact.user is not None and entity_name_normalize(mention.name) in self.names_of(fact.user)


def _scope_names(
    stated: Sequence[StatedRelations], *, user_mentions: _UserMentions
) -> dict[tuple[int, int | None], set[str]]:
    """Every name the batch's mentions of others give, by scope (agent, user)."""
    names: dict[tuple[int, int | None], set[str]] = {}
    for item in stated:
        scope = names.setdefault((item.fact.agent_id, item.fact.user_id), set())
        for statement in item.statements:
            for mention in (statement.subject, statement.object):
                if mention is not None and not user_mentions.is_the_user(item.fact, mention):
                    scope.update(_upsert_names(name=mention.name, aliases=mention.aliases)[1])
    return names


@transaction.atomic
def relations_write(*, stated: Sequence[StatedRelations]) -> list[Relation]:
    """The one writer of relations: those of several fact versions (one formation run's, an import batch's, one fact's
    through fact_relations_write), each in its fact's scope, linked to the version and the messages it came from; a
    relation that holds already (current, same subject, predicate and object) gains the new sources. In a number of
    statements that does not grow with the relations (per scope, the user's entity and one locked read of
    the entities the mentions name; then one insert and one update of entities, one read and one insert of relations,
    one insert of each kind of link). A statement about the user in an agent-wide fact is dropped: agent-wide memory
    names no user. Returns the relation each statement written holds to, in order."""
    stated = [item for item in stated if item.statements]
    if not stated:
        return []
    user_mentions = _UserMentions()
    user_entities: dict[int | None, Entity] = {}
    for item in stated:
        if item.fact.user_id is None or item.fact.user_id in user_entities:
            continue
        user = item.fact.user
        if user is not None and any(
            mention is not None and user_mentions.is_the_user(item.fact, mention)
            for statement in item.statements
            for mention in (statement.subject, statement.object)
        ):
            user_entities[item.fact.user_id] = user_entity_get_or_create(
                agent=item.fact.agent, user=user, names=user_mentions.names_of(user)
            )
    scopes = {
        (agent_id, user_id): names
        for (agent_id, user_id), names in _scope_names(stated, user_mentions=user_mentions).items()
        if names
    }
    entities: dict[tuple[int, int | None], _ScopeEntities] = {}
    for item in stated:
        scope = (item.fact.agent_id, item.fact.user_id)
        if scope in scopes and scope not in entities:
            entities[scope] = _ScopeEntities(
                agent=item.fact.agent,
                user=item.fact.user,
                names=scopes[scope],
                user_entity=user_entities.get(item.fact.user_id),
            )

    def resolve(fact: Fact, mention: EntityMention) -> Entity | None:
        if user_mentions.is_the_user(fact, mention):
            return user_entities.get(fact.user_id)
        return entities[(fact.agent_id, fact.user_id)].upsert(mention)

    planned = []
    for item in stated:
        for statement in item.statements:
            subject = resolve(item.fact, statement.subject)
            target = resolve(item.fact, statement.object) if statement.object is not None else None
            if subject is None or (statement.object is not None and target is None):
                continue
            planned.append((item, statement, subject, target))
    for scope_entities in entities.values():
        scope_entities.save()
    now = timezone.now()
    rows = []
    for item, statement, subject, target in planned:
        if target is not None and target.pk == subject.pk:
            continue  # "Maria is Maria": an alias, not a relation
        predicate, object_value = _relation_values(
            predicate=statement.predicate, object_entity=target, object_value=statement.value
        )
        rows.append((item, (subject.pk, predicate, target.pk if target else None, object_value), subject))
    if not rows:
        return []
    current = {
        (relation.subject_id, relation.predicate, relation.object_entity_id, relation.object_value): relation
        for relation in Relation.objects.filter(
            subject_id__in={key[0] for _, key, _ in rows},
            predicate__in={key[1] for _, key, _ in rows},
            valid_to__isnull=True,
        )
    }
    created = []
    for item, key, subject in rows:
        if key not in current:
            current[key] = Relation(
                agent_id=subject.agent_id,
                user_id=subject.user_id,
                subject_id=key[0],
                predicate=key[1],
                object_entity_id=key[2],
                object_value=key[3],
                formed_at=now,
                valid_from=item.fact.valid_from or now,
                held_from=item.fact.held_from,
                held_from_precision=item.fact.held_from_precision,
                held_until=item.fact.held_until,
                held_until_precision=item.fact.held_until_precision,
                category=item.fact.category,
            )
            created.append(current[key])
    Relation.objects.bulk_create(created)
    written = [current[key] for _, key, _ in rows]
    fact_links = {(current[key].pk, item.fact.pk) for item, key, _ in rows}
    message_links = {(current[key].pk, message.pk) for item, key, _ in rows for message in item.source_messages}
    fact_link, message_link = Relation.source_facts.through, Relation.source_messages.through
    if fact_links:
        fact_link.objects.bulk_create(
            [fact_link(relation_id=relation_id, fact_id=fact_id) for relation_id, fact_id in sorted(fact_links)],
            ignore_conflicts=True,
        )
    if message_links:
        message_link.objects.bulk_create(
            [
                message_link(relation_id=relation_id, message_id=message_id)
                for relation_id, message_id in sorted(message_links)
            ],
            ignore_conflicts=True,
        )
    return written


def fact_relations_write(
    *, fact: Fact, statements: Iterable[RelationStatement], source_messages: Sequence[Message]
) -> list[Relation]:
    """The relations one fact states (relations_write for one fact version)."""
    return relations_write(
        stated=[StatedRelations(fact=fact, statements=list(statements), source_messages=source_messages)]
    )


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
    """A successor that says the same (a new scope, a moved owner, an end in the world) states the same relations:
    they stay current, with the successor's world time."""
    carried = list(Relation.objects.filter(source_facts=fact, valid_to__isnull=True).values_list("pk", flat=True))
    through = Relation.source_facts.through
    through.objects.bulk_create(
        [through(relation_id=relation_id, fact_id=successor.pk) for relation_id in carried], ignore_conflicts=True
    )
    Relation.objects.filter(pk__in=carried).update(
        held_from=successor.held_from,
        held_from_precision=successor.held_from_precision,
        held_until=successor.held_until,
        held_until_precision=successor.held_until_precision,
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
