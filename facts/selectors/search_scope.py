"""What one fact search may read: the caller's scope (the agent's facts visible agent-wide plus the user's own) in
the active embedding space, with the caller's filters, rendered as SQL conditions for the two signals.

Search SQL is written by hand on this path (docs/architecture.md, "Fact search"): the conditions must repeat the
partial indexes' predicates word for word for the planner to use them, ids are cast to bigint so that btree_gin's
int8 operator class applies, and each signal's scope parts run as separately planned branches."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from core.search.retrieval import CorpusKey
from core.search.time_expressions import Period

# The predicate of the partial indexes on facts_fact (facts.models.Fact.Meta.indexes), as PostgreSQL renders it.
SHARED_SQL = "scopes @> ARRAY['agent'::varchar(10)]"
CORPUS_SHARED = "facts.shared"
CORPUS_OWN = "facts.own"


def validity_sql(*, alias: str, as_of: datetime | None, include_history: bool) -> tuple[str, list]:
    """The rows of a table with valid_from and valid_to (fact versions, relations) that count: those valid at
    `as_of`, all with the history, or the current ones."""
    if as_of is not None:
        return f"{alias}.valid_from <= %s AND ({alias}.valid_to IS NULL OR {alias}.valid_to > %s)", [as_of, as_of]
    if include_history:
        return "true", []
    return f"{alias}.valid_to IS NULL", []


@dataclass(frozen=True)
class FactSearchScope:
    space_id: int
    dimensions: int
    agent_id: int
    user_id: int | None
    scopes: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    as_of: datetime | None = None
    include_history: bool = False
    period: Period | None = None  # only facts valid from, or naming a day, within it (time_filter "restrict")
    holds_at: date | None = None  # only facts whose statement may have held in the world that day

    @property
    def current_only(self) -> bool:
        """Only current versions: the indexes and statistics of the current facts apply."""
        return self.as_of is None and not self.include_history

    @property
    def corpora(self) -> list[CorpusKey]:
        """The kept statistics that make up this scope."""
        corpora = [CorpusKey(corpus=CORPUS_SHARED, space_id=self.space_id, scope_id=self.agent_id)]
        if self.user_id is not None:
            corpora.append(CorpusKey(corpus=CORPUS_OWN, space_id=self.space_id, scope_id=self.user_id))
        return corpora

    def validity_sql(self, *, alias: str) -> tuple[str, list]:
        """Which versions count, on a table with valid_from, valid_to and expires_at (facts_fact, or
        facts_factembedding, which copies them): valid, and not expired (at `as_of`, or now)."""
        validity, params = validity_sql(alias=alias, as_of=self.as_of, include_history=self.include_history)
        if self.include_history and self.as_of is None:
            return validity, params
        unexpired, unexpired_params = self.unexpired_sql(alias=alias)
        return f"{validity} AND {unexpired}", [*params, *unexpired_params]

    def unexpired_sql(self, *, alias: str) -> tuple[str, list]:
        """Facts whose expiry has not passed (at `as_of`, or now: the statement's start, not the transaction's as
        now() would be, so that a long transaction does not keep reading what expired meanwhile)."""
        if self.as_of is not None:
            return f"({alias}.expires_at IS NULL OR {alias}.expires_at > %s)", [self.as_of]
        return f"({alias}.expires_at IS NULL OR {alias}.expires_at > statement_timestamp())", []

    @property
    def filtered(self) -> bool:
        """The caller filters on columns of facts_fact (fact_filters_sql)."""
        return bool(self.scopes or self.tags or self.period or self.holds_at)

    def fact_filters_sql(self, *, alias: str) -> tuple[str, list]:
        """The caller's scopes and tags filters (any of the given values), period and world-time moment, on
        facts_fact."""
        conditions: list[str] = []
        params: list[object] = []
        if self.scopes:
            conditions.append(f"{alias}.scopes && %s::varchar(10)[]")
            params.append(list(self.scopes))
        if self.tags:
            conditions.append(f"{alias}.tags && %s::varchar(100)[]")
            params.append(list(self.tags))
        if self.period:
            conditions.append(
                f"({alias}.refers_to BETWEEN %s AND %s "
                f"OR ({alias}.valid_from AT TIME ZONE 'UTC')::date BETWEEN %s AND %s)"
            )
            params += [self.period.start, self.period.end, self.period.start, self.period.end]
        if self.holds_at:
            # Known not to hold that day: begun after it, or ended by it (facts.world_time.WorldTime.may_hold_on).
            conditions.append(
                f"({alias}.held_from IS NULL OR {alias}.held_from <= %s) "
                f"AND ({alias}.held_until IS NULL OR {alias}.held_until > %s)"
            )
            params += [self.holds_at, self.holds_at]
        return " AND ".join(conditions) or "true", params
