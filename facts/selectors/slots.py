"""Which facts state one of the user's single-valued slots (employer, job, home, partner ...): what a question asking
for that slot ("Where does the user work now?") is about, whatever other words a fact shares with it. Read from the
relations the facts state (facts.grammar.slots reads their predicates) and from their profile keys."""

from __future__ import annotations

from django.db.models import Q

from facts.grammar.slots import USER, key_slot, relation_slot
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
