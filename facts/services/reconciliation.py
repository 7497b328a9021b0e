"""Formation step 3: reconcile new facts with what is known, without ever destroying anything.

Planning (no transaction, may call the LLM): embed all new facts in one batch; exact duplicates (hash) and
near-duplicates (similarity >= FACT_DUPLICATE_SIMILARITY) are NONE and facts with no similar current fact are ADD,
both without an LLM call; the rest go to one batched LLM call that sees short integer ids, never database ids.
Applying (inside the formation's final transaction, under a lock per scope): every decision is re-checked against
the facts written since planning (planning saw all the others), so two formations racing on one scope never store a
duplicate.
Entities and relations the extractor found with a fact are written last, linked to the version its statement ended
up in (added, updated, or the one already holding it); versions closed here end their relations
(facts.services.graph)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone
from pgvector.django import CosineDistance

from agents.models import Agent, EndUser
from conversations.models import Message, Session
from core.embeddings.spaces import embedding_expression, embedding_provider_for_space, embedding_space_active
from core.llm.client import OutputInvalid, llm_complete_json, prompt_render
from core.models import EmbeddingSpace
from facts.models import Fact, FactEmbedding, FactScope, FactWriter
from facts.services.categories import Filing, facts_file
from facts.services.extraction import ExtractedFact
from facts.services.facts import (
    NewFact,
    fact_close,
    fact_content_hash,
    fact_profile_set,
    fact_said_at,
    fact_supersede,
    fact_world_end,
    facts_create_bulk,
)
from facts.services.graph import StatedRelations, relations_write
from facts.services.reference_documents import facts_restating_reference
from facts.services.world_changes import (
    WorldEnd,
    cessation_ends,
    extracted_slots,
    slot_changes_plan,
    stored_slots,
    world_ends_apply,
)
from facts.world_time import TimePrecision, WorldTime, WorldTimeInvalid, world_time_format, world_time_parse

PROMPT = Path(__file__).resolve().parent.parent / "prompts" / "reconcile_facts.txt"
# ENDED: the new fact says the target stopped holding in the world (a changed job, a move): the target stays current
# memory, ended (fact_world_end), and the new fact is added; UPDATE and DELETE are corrections of what was recorded.
ACTIONS = ("ADD", "UPDATE", "DELETE", "NONE", "ENDED")
SCHEMA = {
    "type": "object",
    "properties": {
        "decisions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "new": {"type": "integer"},
                    "action": {"type": "string", "enum": list(ACTIONS)},
                    "target": {"type": ["integer", "null"]},
                    "content": {"type": ["string", "null"]},
                    "reason": {"type": "string"},
                    # ENDED: when the target stopped holding, as the extraction writes it ("2024-05", "ended").
                    "held_until": {"type": ["string", "null"]},
                },
                "required": ["new", "action", "target", "content", "reason"],
            },
        }
    },
    "required": ["decisions"],
}
MAX_CANDIDATES = 5
# A fact's formed_at is set inside its writer's transaction, before that commits: facts committed after planning
# read the scope have a formed_at at most one writer's transaction earlier than planning. Far longer than any.
RECHECK_MARGIN = timedelta(seconds=60)


@dataclass
class FactDecision:
    new: ExtractedFact
    owner: EndUser | None
    vector: np.ndarray
    space: EmbeddingSpace
    action: str
    reason: str
    target: Fact | None = None
    content: str | None = None
    content_vector: np.ndarray | None = None
    candidates: list[tuple[Fact, float]] = field(default_factory=list)
    planned_at: datetime = field(default_factory=timezone.now)
    # Current facts the new statement ends in the world (an ENDED decision, a single-valued slot's new value).
    ends: list[WorldEnd] = field(default_factory=list)


@dataclass
class ReconciliationResult:
    added: list[Fact] = field(default_factory=list)
    updated: list[Fact] = field(default_factory=list)
    deleted: list[Fact] = field(default_factory=list)
    unchanged: int = 0
    ended: list[Fact] = field(default_factory=list)  # versions saying a fact stopped holding in the world


PROTECTED_REASON = "kept beside operator-curated fact {pk}: formation never changes curated memory"


def _kept_beside_curated(*, decision: FactDecision, curated: Fact, user: EndUser) -> None:
    """A statement that would change an operator-curated fact is added as the user's own fact instead (without a
    profile key, which the curated fact holds): the user's view is recorded, the operator's fact stays as written."""
    decision.action, decision.target, decision.content, decision.content_vector = "ADD", None, None, None
    decision.ends = [end for end in decision.ends if end.fact.pk != curated.pk]
    decision.reason = PROTECTED_REASON.format(pk=curated.pk)
    decision.owner = user
    decision.new = replace(decision.new, scopes=[FactScope.USER], key="")


def _similar_current_facts(
    *, agent: Agent, owner: EndUser | None, vector: np.ndarray, space: EmbeddingSpace, min_similarity: float
) -> list[tuple[Fact, float]]:
    """Current facts of the same scope (same agent and owner) at or above min_similarity, most similar first."""
    rows = (
        FactEmbedding.objects.filter(space=space, agent=agent, fact__valid_to__isnull=True, fact__user=owner)
        .select_related("fact")
        .annotate(distance=CosineDistance(embedding_expression(space=space), vector))
        .filter(distance__lte=1 - min_similarity)
        .order_by("distance")[:MAX_CANDIDATES]
    )
    return [(row.fact, 1 - row.distance) for row in rows]


def _decide(data: object, *, new_count: int, existing_count: int) -> dict[int, dict]:
    if not isinstance(data, dict) or not isinstance(data.get("decisions"), list):
        raise OutputInvalid('expected an object {"decisions": [...]}')
    decisions: dict[int, dict] = {}
    for index, item in enumerate(data["decisions"]):
        if not isinstance(item, dict) or item.get("new") not in range(1, new_count + 1):
            raise OutputInvalid(f"decisions[{index}].new must be a new fact number from 1 to {new_count}")
        action = str(item.get("action", "")).upper()
        if action not in ACTIONS:
            raise OutputInvalid(f"decisions[{index}].action must be one of {', '.join(ACTIONS)}")
        target = item.get("target")
        if action in ("UPDATE", "DELETE", "ENDED") and target not in range(1, existing_count + 1):
            raise OutputInvalid(f"decisions[{index}] ({action}) needs a target existing fact number")
        if action == "UPDATE" and not (isinstance(item.get("content"), str) and item["content"].strip()):
            raise OutputInvalid(f"decisions[{index}] (UPDATE) needs the updated statement as content")
        decisions[item["new"]] = {**item, "action": action}
    return decisions


def _ended_at(item: dict) -> tuple[date | None, str] | None:
    """When an ENDED decision says its target stopped holding: (day, precision), (None, "unknown") for "ended";
    None when it does not say, or says it malformed (then where the new fact begins)."""
    try:
        world = world_time_parse(held_from=None, held_until=item.get("held_until") or None)
    except (WorldTimeInvalid, AttributeError):
        return None
    return (world.end, world.end_precision) if world.end_precision else None


def _rule_violations(data: dict, *, new_count: int) -> dict[str, int]:
    """What a valid reply got wrong that the plan then works around: new facts left without a decision (they are
    added), a fact decided twice (the last decision holds), an updated statement over the word limit, an end in a
    form that cannot be read."""
    decided = [item["new"] for item in data["decisions"]]
    return {
        "malformed_world_time": sum(
            1 for item in data["decisions"] if item.get("held_until") and _ended_at(item) is None
        ),
        "missing_decision": new_count - len(set(decided)),
        "decided_twice": len(decided) - len(set(decided)),
        "over_word_limit": sum(
            1
            for item in data["decisions"]
            if str(item.get("action", "")).upper() == "UPDATE"
            and len(str(item.get("content") or "").split()) > settings.FACT_MAX_WORDS
        ),
    }


def facts_reconcile_plan(
    *, agent: Agent, user: EndUser, extracted: list[ExtractedFact], job_id: int | None
) -> list[FactDecision]:
    planned_at = timezone.now()
    space = embedding_space_active()
    provider = embedding_provider_for_space(space=space)
    unique: dict[tuple[int | None, str], ExtractedFact] = {}
    for fact in extracted:
        owner = user if FactScope.USER in fact.scopes else None
        unique.setdefault((owner.pk if owner else None, fact_content_hash(fact.content)), fact)
    if not unique:
        return []
    new_facts = list(unique.values())
    vectors = provider.embed([fact.content for fact in new_facts])
    restating = facts_restating_reference(
        agent=agent, contents=[fact.content for fact in new_facts], vectors=vectors, space=space
    )
    exact_of: dict[tuple[int | None, str], Fact] = {}
    for stored in Fact.objects.filter(
        Q(user=user) | Q(user__isnull=True),
        agent=agent,
        content_hash__in=[content_hash for _, content_hash in unique],
        valid_to__isnull=True,
    ).order_by("pk"):
        exact_of.setdefault((stored.user_id, stored.content_hash), stored)

    decisions: list[FactDecision] = []
    for (owner_pk, content_hash), fact, vector, restates in zip(unique, new_facts, vectors, restating, strict=True):
        owner = user if owner_pk is not None else None
        decision = FactDecision(
            new=fact, owner=owner, vector=vector, space=space, action="ADD", reason="new", planned_at=planned_at
        )
        exact = exact_of.get((owner_pk, content_hash))
        keyed = (
            Fact.objects.filter(agent=agent, user=owner, key=fact.key, valid_to__isnull=True).first()
            if fact.key and owner is not None
            else None
        )
        if restates:
            decision.action, decision.reason = "NONE", "restates a reference document"
        elif exact is not None and _holds_again(stored=exact, new=fact, owner=owner):
            # Said again after it ended ("The user lives in Madrid." once more, back from Barcelona): it holds again.
            decision.action, decision.reason, decision.target = "RESUME", "holds again", exact
        elif exact is not None:
            decision.action, decision.reason, decision.target = "NONE", "exact duplicate", exact
        elif keyed is not None and keyed.is_curated:
            _kept_beside_curated(decision=decision, curated=keyed, user=user)
        elif keyed is not None:
            # A new value of a profile attribute is a change in the world, without asking the LLM: it takes the key,
            # the current value stays, ended where the new one begins (fact_profile_set).
            decision.reason, decision.target = "new value", keyed
        else:
            decision.candidates = _similar_current_facts(
                agent=agent,
                owner=owner,
                vector=vector,
                space=space,
                min_similarity=settings.FACT_CANDIDATE_MIN_SIMILARITY,
            )
            if decision.candidates and decision.candidates[0][1] >= settings.FACT_DUPLICATE_SIMILARITY:
                decision.action, decision.reason = "NONE", "near duplicate"
                decision.target = decision.candidates[0][0]
            elif decision.candidates:
                decision.action = "PENDING"
        decisions.append(decision)

    pending = [decision for decision in decisions if decision.action == "PENDING"]
    if pending:
        _decide_with_llm(pending=pending, agent=agent, job_id=job_id)
        for decision in pending:
            if decision.action in ("UPDATE", "DELETE") and decision.target is not None and decision.target.is_curated:
                _kept_beside_curated(decision=decision, curated=decision.target, user=user)
            for end in decision.ends:
                if end.fact.is_curated:
                    _kept_beside_curated(decision=decision, curated=end.fact, user=user)
        updates = [decision for decision in pending if decision.action == "UPDATE"]
        if updates:  # an UPDATE has its content (_decide checks it)
            for decision, content_vector in zip(
                updates, provider.embed([cast(str, decision.content) for decision in updates]), strict=True
            ):
                decision.content_vector = content_vector
    _world_changes_plan(decisions=decisions, agent=agent, user=user)
    return decisions


def _holds_again(*, stored: Fact, new: ExtractedFact, owner: EndUser | None) -> bool:
    """Whether a statement said again is one that had ended in the world and now holds again (not an event, which
    happened once; not a statement said again as over; not a curated one, which formation never changes)."""
    world = stored.world_time
    return (
        owner is not None and world.ended and not world.is_event and not new.world_time.ended and not stored.is_curated
    )


def _world_changes_plan(*, decisions: list[FactDecision], agent: Agent, user: EndUser) -> None:
    """The user's new statements in single-valued slots end the current ones of other values, and statements that
    something stopped end what they say stopped (facts.services.world_changes); the stored slots are read only when
    a new statement fills one."""
    adds = [decision for decision in decisions if decision.action in ("ADD", "RESUME") and decision.owner is not None]
    if not adds:
        return
    taken = {decision.target.pk for decision in decisions if decision.target is not None}
    taken |= {end.fact.pk for decision in decisions for end in decision.ends}
    filling = [decision for decision in adds if extracted_slots(decision.new)]
    stored = stored_slots(agent=agent, owner=user) if filling else []
    for decision in filling:
        changes = slot_changes_plan(new=decision.new, stored=stored, taken=taken)
        if changes is not None:
            decision.ends += changes.ends
            decision.new = replace(decision.new, world_time=changes.world_time, key=changes.key)
    for decision in adds:
        decision.ends += cessation_ends(new=decision.new, agent=agent, owner=user, taken=taken)


def _held(world_time: WorldTime) -> dict[str, str]:
    """A fact's world time as the reconciliation prompt shows it, as the extraction writes it; none when unknown."""
    bounds = {
        "held_from": world_time_format(world_time.start, world_time.start_precision),
        "held_until": world_time_format(world_time.end, world_time.end_precision),
    }
    return {name: value for name, value in bounds.items() if value}


def _held_text(item: dict[str, Any]) -> str:
    said = [f"{name.replace('_', ' ')} {item[name]}" for name in ("held_from", "held_until") if name in item]
    return f" [{'; '.join(said)}]" if said else ""


def _decide_with_llm(*, pending: list[FactDecision], agent: Agent, job_id: int | None) -> None:
    existing: list[Fact] = []
    for decision in pending:
        for fact, _ in decision.candidates:
            if fact not in existing:
                existing.append(fact)
    number_of = {fact.pk: number for number, fact in enumerate(existing, start=1)}
    new_inputs: list[dict[str, Any]] = [
        {
            "number": number,
            "content": decision.new.content,
            "candidates": [number_of[fact.pk] for fact, _ in decision.candidates],
            **_held(decision.new.world_time),
        }
        for number, decision in enumerate(pending, start=1)
    ]
    existing_inputs = [
        {"number": number_of[fact.pk], "content": fact.content, **_held(fact.world_time)} for fact in existing
    ]
    listing = "EXISTING facts:\n" + "\n".join(f"{e['number']}. {e['content']}{_held_text(e)}" for e in existing_inputs)
    listing += "\n\nNEW facts (with the existing facts similar to each):\n" + "\n".join(
        f"{n['number']}. {n['content']}{_held_text(n)}  (similar: {', '.join(map(str, n['candidates']))})"
        for n in new_inputs
    )
    decided = llm_complete_json(
        purpose="reconcile_facts",
        messages=prompt_render(path=PROMPT, values={"facts": listing}),
        inputs={"new_facts": new_inputs, "existing": existing_inputs},
        validate=lambda data: _decide(data, new_count=len(pending), existing_count=len(existing)),
        schema=SCHEMA,
        rules=lambda data: _rule_violations(data, new_count=len(pending)),
        speed="fast",
        agent_id=agent.pk,
        job_kind="formation",
        job_id=job_id,
    )
    for number, decision in enumerate(pending, start=1):
        item = decided.get(number)
        if item is None:
            decision.action, decision.reason = "ADD", "no decision returned"
            continue
        decision.action = item["action"]
        decision.reason = str(item.get("reason") or item["action"].lower())[:200]
        if item.get("target"):
            decision.target = existing[item["target"] - 1]
        if decision.action == "ENDED":  # the target ended in the world; the new fact is added
            target, decision.action, decision.target = cast(Fact, decision.target), "ADD", None
            ended_at = _ended_at(item)
            end, precision = ended_at if ended_at is not None else (None, "")
            if not target.held_until_precision:
                reason = f"ended: {decision.reason}"[:300]
                decision.ends.append(WorldEnd(fact=target, reason=reason, end=end, precision=precision))
        if decision.action == "UPDATE":
            decision.content = " ".join(item["content"].split())


def facts_scope_lock(*, agent: Agent, owner: EndUser | None) -> None:
    """Until the transaction ends, the one writer of the scope's facts and entities (formation, the graph of imported
    and curated facts)."""
    key = int.from_bytes(
        hashlib.sha256(f"facts:{agent.pk}:{owner.pk if owner else 0}".encode()).digest()[:8], "big", signed=True
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def _current_version(fact: Fact) -> Fact | None:
    """The fact's current version: a concurrent formation may have superseded the one planning saw."""
    latest = Fact.objects.filter(lineage=fact.lineage).order_by("-version").first()
    return latest if latest is not None and latest.valid_to is None else None


@dataclass
class _RecentFacts:
    """Current facts of the decisions' scopes written since planning (and those this apply writes), to re-check ADDs
    against: by content hash, and by similarity at or above FACT_DUPLICATE_SIMILARITY."""

    hashes: set[tuple[int | None, str]] = field(default_factory=set)
    vectors: dict[int | None, list[np.ndarray]] = field(default_factory=dict)

    def add(self, *, owner_id: int | None, content_hash: str, vector: np.ndarray | None) -> None:
        self.hashes.add((owner_id, content_hash))
        if vector is not None:
            self.vectors.setdefault(owner_id, []).append(np.asarray(vector, dtype=np.float32))

    def duplicates(self, *, owner_id: int | None, content: str, vector: np.ndarray) -> bool:
        if (owner_id, fact_content_hash(content)) in self.hashes:
            return True
        written = self.vectors.get(owner_id)
        if not written:
            return False
        # Stored vectors are unit length (providers normalise): the dot product is the cosine similarity.
        return float(np.max(np.stack(written) @ vector)) >= settings.FACT_DUPLICATE_SIMILARITY


def _facts_written_since_planning(*, decisions: list[FactDecision], agent: Agent) -> _RecentFacts:
    recent = _RecentFacts()
    adds = [decision for decision in decisions if decision.action in ("ADD", "UPDATE")]
    if not adds:
        return recent
    owners = {decision.owner.pk if decision.owner else None for decision in adds}
    in_scopes = Q(user_id__in=[owner for owner in owners if owner is not None])
    if None in owners:
        in_scopes |= Q(user__isnull=True)
    since = min(decision.planned_at for decision in adds) - RECHECK_MARGIN
    rows = list(
        Fact.objects.filter(in_scopes, agent=agent, valid_to__isnull=True, formed_at__gte=since).values_list(
            "pk", "user_id", "content_hash"
        )
    )
    if rows:
        vectors = dict(
            FactEmbedding.objects.filter(fact_id__in=[pk for pk, _, _ in rows], space=adds[0].space).values_list(
                "fact_id", "embedding"
            )
        )
        for pk, owner_id, content_hash in rows:
            recent.add(owner_id=owner_id, content_hash=content_hash, vector=vectors.get(pk))
    return recent


def _decisions_move_to_active_space(*, decisions: list[FactDecision]) -> None:
    """`reembed` may have switched the active space while the LLM reconciled: vectors planned in the retired space
    would be stored where no search reads them, so they are computed again in the active one (one batch)."""
    active = embedding_space_active()
    stale = [decision for decision in decisions if decision.space.pk != active.pk]
    if not stale:
        return
    texts = [decision.new.content for decision in stale]
    # An UPDATE's content comes with its vector.
    texts += [cast(str, decision.content) for decision in stale if decision.content_vector is not None]
    vectors = iter(embedding_provider_for_space(space=active).embed(texts))
    for decision in stale:
        decision.vector, decision.space = next(vectors), active
    for decision in stale:
        if decision.content_vector is not None:
            decision.content_vector = next(vectors)


def _targets_current(*, decisions: list[FactDecision]) -> dict[int, Fact | None]:
    """The current version of each UPDATE's and DELETE's target, read once under the scope locks (a concurrent
    formation, or an operator, may have superseded the version planning saw), by decision index."""
    return {
        index: _current_version(decision.target)
        for index, decision in enumerate(decisions)
        if decision.action in ("UPDATE", "DELETE", "RESUME") and decision.target is not None
    }


def _curated_since_planning_protect(
    *, decisions: list[FactDecision], targets: dict[int, Fact | None], agent: Agent, user: EndUser
) -> None:
    """An operator may have edited a target, or set a profile attribute, after planning read the scope: such a
    decision becomes a fact of the user's own, as if planning had seen the curated version."""
    for index, decision in enumerate(decisions):
        current = targets.get(index)
        if current is not None and current.is_curated:
            _kept_beside_curated(decision=decision, curated=current, user=user)
        elif decision.action == "ADD" and decision.new.key and decision.owner is not None:
            keyed = Fact.objects.filter(
                agent=agent, user=decision.owner, key=decision.new.key, valid_to__isnull=True
            ).first()
            if keyed is not None and keyed.is_curated:
                _kept_beside_curated(decision=decision, curated=keyed, user=user)


@dataclass
class _Applying:
    """What applying the decisions of one formation shares: its scope, the facts written since planning (and by this
    apply), and the tally."""

    agent: Agent
    session: Session
    recent: _RecentFacts
    result: ReconciliationResult = field(default_factory=ReconciliationResult)
    stated: list[tuple[Fact, FactDecision, list[Message]]] = field(default_factory=list)
    filings: list[Filing] = field(default_factory=list)

    def states(self, *, fact: Fact, decision: FactDecision, sources: list[Message]) -> None:
        """The fact version the decision's statement ended up in (new, or already there): its relations link to it;
        a version this formation wrote is filed under the decision's category."""
        if decision.new.category and (fact.formed_at >= decision.planned_at or not fact.category):
            self.filings.append(Filing(fact=fact, category=decision.new.category, value=decision.new.category_value))
        if decision.new.relations:
            self.stated.append((fact, decision, sources))


def _keyed_add_apply(*, applying: _Applying, decision: FactDecision, owner: EndUser, sources: list[Message]) -> None:
    """A new value of a profile attribute: it replaces the current value (fact_profile_set)."""
    owner_id = owner.pk
    if applying.recent.duplicates(owner_id=owner_id, content=decision.new.content, vector=decision.vector):
        applying.result.unchanged += 1
        return
    applying.recent.add(owner_id=owner_id, content_hash=fact_content_hash(decision.new.content), vector=decision.vector)
    fact, outcome = fact_profile_set(
        agent=applying.agent,
        user=owner,
        key=decision.new.key,
        content=decision.new.content,
        source_session=applying.session,
        source_messages=sources,
        embedding=decision.vector,
        space=decision.space,
        change_reason="extracted",
        written_by=FactWriter.FORMATION,
        world_time=decision.new.world_time,
    )
    if outcome == "unchanged":
        applying.result.unchanged += 1
    else:
        (applying.result.added if outcome == "created" else applying.result.updated).append(fact)
    applying.states(fact=fact, decision=decision, sources=sources)


def _update_apply(*, applying: _Applying, decision: FactDecision, target: Fact, sources: list[Message]) -> None:
    """A new version of the target; or, when another current fact already says the new content, the target closed
    into it."""
    result, agent = applying.result, applying.agent
    content = decision.content or decision.new.content
    if fact_content_hash(content) == target.content_hash:
        result.unchanged += 1
        applying.states(fact=target, decision=decision, sources=sources)
        return
    already_stated = Fact.objects.filter(
        agent=agent, user=target.user, content_hash=fact_content_hash(content), valid_to__isnull=True
    ).first()
    if already_stated is not None:
        result.deleted.append(
            fact_close(
                fact=target,
                reason=f"merged: {decision.reason}"[:300],
                closed_by_messages=sources,
                superseded_by=already_stated,
            )
        )
        applying.states(fact=already_stated, decision=decision, sources=sources)
        return
    vector = decision.content_vector if decision.content_vector is not None else decision.vector
    world_time = decision.new.world_time if decision.new.world_time.known else target.world_time
    successor = fact_supersede(
        fact=target,
        content=content,
        reason=(decision.reason if decision.reason == "new value" else f"updated: {decision.reason}")[:300],
        source_session=applying.session,
        source_messages=sources,
        embedding=vector,
        space=decision.space,
        written_by=FactWriter.FORMATION,
        world_time=world_time,
    )
    new_key = decision.new.key
    if (
        new_key
        and not successor.key
        and successor.user_id
        and not Fact.objects.filter(agent=agent, user=successor.user, key=new_key, valid_to__isnull=True).exists()
    ):
        Fact.objects.filter(pk=successor.pk).update(key=new_key)
        successor.key = new_key
    applying.recent.add(owner_id=successor.user_id, content_hash=successor.content_hash, vector=vector)
    result.updated.append(successor)
    applying.states(fact=successor, decision=decision, sources=sources)


def _resume_apply(*, applying: _Applying, decision: FactDecision, target: Fact, sources: list[Message]) -> None:
    """A statement that had ended holds again: a new version of it, its world time the new statement's (from where
    it was said, roughly, when it does not say), the earlier version in history with the period it held before. A
    profile key the statement carries comes back to it, from the value that had taken it (ended where this begins).
    A version changed since planning (ended no more, or curated) is left as it is."""
    if not target.world_time.ended or target.is_curated:
        applying.result.unchanged += 1
        applying.states(fact=target, decision=decision, sources=sources)
        return
    world = decision.new.world_time
    if world.start is None:
        said = fact_said_at(source_messages=sources, formed_at=timezone.now()).date()
        world = WorldTime(start=said, start_precision=TimePrecision.APPROXIMATE)
    key = decision.new.key if decision.owner is not None else ""
    if key:
        holder = (
            Fact.objects.filter(agent=applying.agent, user=decision.owner, key=key, valid_to__isnull=True)
            .exclude(lineage=target.lineage)
            .first()
        )
        if holder is not None and holder.is_curated:
            key = ""
        elif holder is not None:
            applying.result.ended.append(
                fact_world_end(
                    fact=holder,
                    end=world.start,
                    end_precision=world.start_precision,
                    reason=f"changed: {target.content}"[:300],
                    source_messages=sources,
                    keep_key=False,
                )
            )
    resumed = fact_supersede(
        fact=target,
        content=target.content,
        reason=f"holds again: {target.content}"[:300],
        source_session=applying.session,
        source_messages=sources,
        written_by=FactWriter.FORMATION,
        world_time=world,
        key=key or None,
    )
    applying.recent.add(owner_id=resumed.user_id, content_hash=resumed.content_hash, vector=decision.vector)
    applying.result.updated.append(resumed)
    applying.states(fact=resumed, decision=decision, sources=sources)


def _plain_adds_apply(*, applying: _Applying, adds: list[tuple[FactDecision, list[Message]]]) -> None:
    """The new facts without a profile key, in one batch (facts_create_bulk), but for those that duplicate a fact
    written since planning."""
    new_facts, kept = [], []
    for decision, sources in adds:
        owner_id = decision.owner.pk if decision.owner else None
        moved_to_user = decision.reason.startswith(PROTECTED_REASON[:20])  # planning checked another scope
        if applying.recent.duplicates(owner_id=owner_id, content=decision.new.content, vector=decision.vector) or (
            moved_to_user
            and Fact.objects.filter(
                agent=applying.agent,
                user_id=owner_id,
                content_hash=fact_content_hash(decision.new.content),
                valid_to__isnull=True,
            ).exists()
        ):
            applying.result.unchanged += 1
            continue
        applying.recent.add(
            owner_id=owner_id, content_hash=fact_content_hash(decision.new.content), vector=decision.vector
        )
        kept.append((decision, sources))
        new_facts.append(
            NewFact(
                user=decision.owner,
                scopes=decision.new.scopes,
                content=decision.new.content,
                source_messages=sources,
                embedding=decision.vector,
                world_time=decision.new.world_time,
            )
        )
    if new_facts:
        created = facts_create_bulk(
            agent=applying.agent,
            new_facts=new_facts,
            change_reason="extracted",
            source_session=applying.session,
            space=adds[0][0].space,
            written_by=FactWriter.FORMATION,
        )
        applying.result.added += created
        for fact, (decision, sources) in zip(created, kept, strict=True):
            applying.states(fact=fact, decision=decision, sources=sources)


def facts_reconcile_apply(
    *, decisions: list[FactDecision], agent: Agent, session: Session, source_messages_fallback: list[Message]
) -> ReconciliationResult:
    """Run inside the formation's transaction. Takes a transaction-scoped advisory lock per scope (in a fixed
    order, so concurrent formations cannot deadlock) and re-checks each decision against the current facts."""
    _decisions_move_to_active_space(decisions=decisions)
    owners = {decision.owner.pk if decision.owner else 0: decision.owner for decision in decisions}
    # Protection may move a decision to the user's own scope: that scope is locked too, before anything is read.
    owners.setdefault(session.user.pk, session.user)
    for owner_pk in sorted(owners):
        facts_scope_lock(agent=agent, owner=owners[owner_pk])
    targets = _targets_current(decisions=decisions)
    _curated_since_planning_protect(decisions=decisions, targets=targets, agent=agent, user=session.user)
    applying = _Applying(
        agent=agent, session=session, recent=_facts_written_since_planning(decisions=decisions, agent=agent)
    )
    plain_adds: list[tuple[FactDecision, list[Message]]] = []
    # Facts without a profile key are added last, in one batch: by then every UPDATE's new content is in `recent`,
    # so an ADD saying the same is recognised as a duplicate rather than inserted beside it.
    for index, decision in enumerate(decisions):
        sources = decision.new.source_messages or source_messages_fallback
        action = decision.action
        target = targets.get(index) if action in ("UPDATE", "DELETE", "RESUME") else None
        if action in ("UPDATE", "DELETE", "RESUME") and target is None:
            action = "ADD" if action == "UPDATE" else "NONE"  # the target is gone: its successor decides
        if action in ("ADD", "RESUME") and decision.ends:
            applying.result.ended += world_ends_apply(
                ends=decision.ends, new_world_time=decision.new.world_time, sources=sources
            )
        if action == "ADD" and decision.new.key and decision.owner is not None:
            _keyed_add_apply(applying=applying, decision=decision, owner=decision.owner, sources=sources)
        elif action == "ADD":
            plain_adds.append((decision, sources))
        elif action == "UPDATE" and target is not None:
            _update_apply(applying=applying, decision=decision, target=target, sources=sources)
        elif action == "RESUME" and target is not None:
            _resume_apply(applying=applying, decision=decision, target=target, sources=sources)
        elif action == "DELETE" and target is not None:
            applying.result.deleted.append(
                fact_close(fact=target, reason=f"deleted: {decision.reason}"[:300], closed_by_messages=sources)
            )
        else:
            applying.result.unchanged += 1
            # A statement memory already holds still names its entities: they link to the version that holds it.
            held = _current_version(decision.target) if decision.action == "NONE" and decision.target else None
            if held is not None:
                applying.states(fact=held, decision=decision, sources=sources)
    _plain_adds_apply(applying=applying, adds=plain_adds)
    facts_file(filings=applying.filings)  # before the relations, which take their fact's category
    relations_write(
        stated=[
            StatedRelations(fact=fact, statements=decision.new.relations, source_messages=sources)
            for fact, decision, sources in applying.stated
        ]
    )
    return applying.result
