"""Which facts answer the topic a question about the user asks for (facts.grammar.slots.question_topic): those that
state one of the user's single-valued slots (employer, job, home, partner ...), read from the relations the facts
state and from their profile keys, and those about the user filed under the topic's categories ("The user co-founded
Ledgerly." under work), whatever other words a fact shares with the question."""

from __future__ import annotations

from django.db.models import Q

from facts.grammar.slots import USER, QuestionTopic, about_someone_who_was, key_slot, relation_slot, said_of
from facts.models import EntityType, Fact, Relation


def facts_stating_user_slots(*, fact_ids: list[int], slots: frozenset[str]) -> set[int]:
    """Those of `fact_ids` that state a slot of the user's among `slots`."""
    if not fact_ids or not slots:
        return set()
    stating = {
        fact_id
        for fact_id, key in Fact.objects.filter(pk__in=fact_ids).exclude(key="").values_list("pk", "key")
        if key_slot(key) in slots
    }
    rows = (
        Relation.source_facts.through.objects.filter(fact_id__in=fact_ids)
        .filter(Q(relation__subject__is_user=True) | Q(relation__object_entity__is_user=True))
        .values_list(
            "fact_id",
            "relation__subject__is_user",
            "relation__subject__name",
            "relation__predicate",
            "relation__object_entity__is_user",
            "relation__object_entity__name",
            "relation__object_entity__entity_type",
            "relation__object_value",
        )
    )
    for fact_id, subject_is_user, subject, predicate, object_is_user, target, target_type, value in rows:
        slot = relation_slot(
            subject=USER if subject_is_user else subject.lower(),
            predicate=predicate,
            target=USER if object_is_user else (target or value or "").lower(),
            target_is_organisation=target_type == EntityType.ORGANISATION,
        )
        if slot is not None and slot.subject == USER and slot.name in slots:
            stating.add(fact_id)
    return stating


def facts_answering_topic(*, fact_ids: list[int], topic: QuestionTopic, now_asked: bool) -> set[int]:
    """Those of `fact_ids` that state a slot of the user's the topic asks for, or say something of the user filed
    under the topic; for a question about now (`now_asked`), never one about someone who was the user's (an ex, a
    former boss), who may answer one about then ("Who was the user married to in 2015?")."""
    if not fact_ids:
        return set()
    rows = Fact.objects.filter(pk__in=fact_ids).values_list("pk", "content", "category", "category_value")
    stating = facts_stating_user_slots(fact_ids=fact_ids, slots=topic.slots)
    return {
        fact_id
        for fact_id, content, category, value in rows
        if not (now_asked and about_someone_who_was(content))
        and (
            fact_id in stating
            or (
                said_of(content=content, subject=USER)
                and topic.filed_under(content=content, category=category, value=value)
            )
        )
    }
