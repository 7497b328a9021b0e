"""The graph of facts that formation did not write: imported, curated through the API or the admin, or written by
the assistant's tools. Formation's extractor lists entities and relations with the facts in one reply; these facts
come without them, so they are parsed by the facts' grammar (facts/grammar/graph.py, spaCy), the code the offline
extractor reads its own facts with, with the same rules (a relation naming a secret is dropped), so that a fact joins
the graph whoever wrote it.

An import runs it in its own process, batch by batch (the graph is there when the import returns); a single write
queues it for a worker after commit (facts.services.facts.facts_graph_extract_later), so no request waits for spaCy."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

from django.db import transaction
from django.db.models import Exists, OuterRef

from core.safety.sensitive import sensitive_findings
from facts.grammar.graph import graph_of_facts
from facts.models import Fact, Relation
from facts.services.extraction import relation_holds_a_secret, relations_of_reply
from facts.services.graph import StatedRelations, relations_write
from facts.services.reconciliation import facts_scope_lock


def facts_graph_extract(*, fact_ids: Sequence[int]) -> int:
    """The entities and relations the given facts state, written in each fact's scope and linked to the fact and its
    source messages. Closed versions, facts holding a secret and facts already stating relations are skipped: those
    came with their writer's own (an approved held fact with its extractor's statements, a successor carrying its
    predecessor's), which a second parse would only blur. Returns how many relations were written or linked."""
    facts = list(
        Fact.objects.filter(pk__in=list(fact_ids), valid_to__isnull=True)
        .exclude(Exists(Relation.source_facts.through.objects.filter(fact_id=OuterRef("pk"))))
        .select_related("agent", "user")
        .prefetch_related("source_messages")
        .order_by("agent_id", "user_id", "pk")
    )
    facts = [fact for fact in facts if not sensitive_findings(fact.content)]
    if not facts:
        return 0
    relations_of = relations_of_reply(graph_of_facts([{"content": fact.content} for fact in facts]))
    statements = {
        fact.pk: [statement for statement in relations_of.get(number, ()) if not relation_holds_a_secret(statement)]
        for number, fact in enumerate(facts, start=1)
    }
    written = 0
    for _, in_scope in groupby(facts, key=lambda fact: (fact.agent_id, fact.user_id)):
        scope_facts = [fact for fact in in_scope if statements[fact.pk]]
        if not scope_facts:
            continue
        with transaction.atomic():
            facts_scope_lock(agent=scope_facts[0].agent, owner=scope_facts[0].user)
            current = set(
                Fact.objects.filter(pk__in=[fact.pk for fact in scope_facts], valid_to__isnull=True).values_list(
                    "pk", flat=True
                )
            )
            written += len(
                relations_write(
                    stated=[
                        StatedRelations(
                            fact=fact, statements=statements[fact.pk], source_messages=list(fact.source_messages.all())
                        )
                        for fact in scope_facts
                        if fact.pk in current  # closed meanwhile: its relations would be born ended
                    ]
                )
            )
    return written
