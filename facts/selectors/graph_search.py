"""The graph signal of fact search: the entities a query names, walked one or two relations out, and the facts that
state the relations they take part in, ranked for fusion (facts.selectors.search).

The query's names are its word n-grams (up to MAX_NAME_WORDS words, "my" read as "the user's" and a trailing "'s"
dropped): entity aliases are stored normalised (facts.services.graph.entity_name_normalize), so matching is one
array overlap, with no NLP on the search path. When the query names any entity, a second statement walks from them
and reads the facts with their scope; when it names none (most questions), that statement is not even planned.

The user's own entity is never a start nor a step of the walk: every first-person relation touches it, so through it
everything would be two hops from everything. Nor is a hub, an entity with more than HUB_RELATIONS current relations
(in a conversation between two people, each of them): like a word found in every document, naming it says little,
and expanding from it would rank half the memory. Naming a hub with other words says more: "Where has Melanie
camped?" picks the hub's relations whose predicate, value or other end says one of the query's other words
("camped_at beach"), through the stored text-search vector of each relation (Relation.said_vector, indexed per end)
and of each entity's name, so that a question about what a person did across many conversations reaches each
relation that says it, whichever words the turns used around it. The user themself is a hub too.

A fact ranks by how many of the named entities its relations reach, then, for a question about a period ("in May
2023"), by whether one of those relations held during it (the relations' validity), then by how well a named hub's
relation matches the query's other words (its facet, above), then by how near (hops), then by how specific the
entities it touches are (a fact about an entity with few relations says more about it than one about an entity named
in many), then the most recent first.

Turn search has the same signal (messages_graph_ranking): the same walk ends in the messages the relations were
formed from. conversations sits below facts and may not import it: the callers of turn search pass it
(conversations.selectors.message_search.messages_search's graph_ranking)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from core.runtime.db_routers import search_connection
from core.runtime.prepared_statements import prepared_cursor
from core.search.retrieval import TimeQuery
from core.search.time_expressions import Period
from facts.selectors.search_scope import FactSearchScope, validity_sql
from facts.services.graph import entity_name_normalize

MAX_NAME_WORDS = 4
HUB_RELATIONS = 30
MAX_QUERY_NAMES = 200
_WORD = re.compile(r"[\w][\w'’.-]*")
_POSSESSIVE = re.compile(r"['’]s?$")
_FACET_WORD = re.compile(r"[^\W_]+")  # letters and digits only: safe inside to_tsquery


def query_names(query: str) -> list[str]:
    """The normalised word n-grams of the query an entity could be known by ("Where does Maria's sister work?" gives
    "maria", "maria's sister", "sister work", ...), each also without a trailing possessive."""
    words = [word.rstrip(".") for word in _WORD.findall(query.lower())]
    words = ["the user's" if word == "my" else word for word in words]
    names: dict[str, None] = {}
    for size in range(1, MAX_NAME_WORDS + 1):
        for start in range(len(words) - size + 1):
            gram = " ".join(words[start : start + size])
            for name in (gram, _POSSESSIVE.sub("", gram)):
                normalised = entity_name_normalize(name)
                if normalised:
                    names[normalised] = None
    return list(names)[:MAX_QUERY_NAMES]


@dataclass(frozen=True)
class GraphRow:
    fact_id: int
    valid_from: datetime
    named_reached: int  # how many of the query's entities the fact's relations reach
    hops: int  # the fewest relations between a named entity and the fact's
    specificity: float  # Σ 1/degree over the reached entities the fact's relations touch


@dataclass(frozen=True)
class _Validity:
    """Which relations a walk may take (`walk_sql`, on a relation table's alias), and which held during the query's
    period (`in_period_sql`): relations are valid over [valid_from, valid_to)."""

    as_of: datetime | None = None
    include_history: bool = False
    period: Period | None = None

    def walk_sql(self, *, alias: str) -> tuple[str, list]:
        """Current relations, those valid at `as_of`, or all with the history."""
        return validity_sql(alias=alias, as_of=self.as_of, include_history=self.include_history)

    def in_period_sql(self, *, alias: str) -> tuple[str, list]:
        if self.period is None:
            return "false", []
        start, end = TimeQuery(period=self.period).period_bounds()
        return f"({alias}.valid_from < %s AND ({alias}.valid_to IS NULL OR {alias}.valid_to > %s))", [end, start]


def _not_a_hub(entity: str) -> str:
    """Counts at most HUB_RELATIONS + 1 relations on each side, each through its index: a hub costs no more than any
    other entity."""
    sides = [
        f"(SELECT count(*) FROM (SELECT 1 FROM facts_relation AS around WHERE around.{column} = {entity} "
        f"AND around.valid_to IS NULL LIMIT {HUB_RELATIONS + 1}) AS bounded)"
        for column in ("subject_id", "object_entity_id")
    ]
    return f"{' + '.join(sides)} <= {HUB_RELATIONS}"


@dataclass(frozen=True)
class _Named:
    """The entities a query names: those the walk starts from, the hubs among them (the user themself included),
    and the query's other words, as a tsquery that picks a hub's relations ("Where has Melanie camped?": Melanie's
    relations whose predicate or other end says "camp")."""

    starts: list[int]
    hubs: list[int]
    facet_words: str

    def __bool__(self) -> bool:
        return bool(self.starts or (self.hubs and self.facet_words))


def _facet_words(*, query: str, matched_aliases: set[str]) -> str:
    """The query's words not in the names it matched, OR-ed for to_tsquery (PostgreSQL drops the stop words)."""
    named_words = {word for alias in matched_aliases for word in _FACET_WORD.findall(alias)}
    words = dict.fromkeys(word for word in _FACET_WORD.findall(query.lower()) if word not in named_words)
    return " | ".join(words)


def _named_entities(*, agent_id: int, user_id: int | None, query: str) -> _Named:
    """The entities of the user's and the agent-wide scope the query names, told apart into walk starts and hubs."""
    names = query_names(query)
    if not names:
        return _Named(starts=[], hubs=[], facet_words="")
    user_condition = "entity.user_id = %s::bigint" if user_id else "false"
    with prepared_cursor(search_connection()) as cursor:
        cursor.execute(
            f"""
            SELECT entity.id, entity.is_user OR NOT ({_not_a_hub("entity.id")}),
                   ARRAY(SELECT unnest(entity.aliases) INTERSECT SELECT unnest(%s::varchar(200)[]))
            FROM facts_entity AS entity
            WHERE entity.agent_id = %s::bigint AND ({user_condition} OR entity.user_id IS NULL)
              AND entity.merged_into_id IS NULL AND entity.aliases && %s::varchar(200)[]
            """,
            [names, agent_id, *([user_id] if user_id else []), names],
        )
        rows = cursor.fetchall()
    hubs = [entity_id for entity_id, hub, _ in rows if hub]
    matched = {alias for _, hub, aliases in rows if hub for alias in aliases}
    return _Named(
        starts=[entity_id for entity_id, hub, _ in rows if not hub],
        hubs=hubs,
        facet_words=_facet_words(query=query, matched_aliases=matched) if hubs else "",
    )


def _stated_sql(
    *, named: _Named, hops: int, validity: _Validity, source_link: str, source_column: str
) -> tuple[str, list]:
    """The walk from the named entities `hops` relations out, and the named hubs' relations that the query's other
    words pick, ending in `stated`: per source (`source_column` of the relation's `source_link` table), how many named
    entities its relations reach, whether one of them held in the query's period, how well a hub's relation matches
    the query's words (its facet), the fewest hops and the specificity. Only the parts the query needs are written:
    the walk is planned at every run, and a part with nothing to start from would still cost its planning.

    Every join on a relation's two ends is written as two joins, one per end, so that each uses its own index
    (relation_subject, relation_object): an OR of the two would scan every relation."""
    relation_ok, relation_params = validity.walk_sql(alias="relation")
    step_ok, step_params = validity.walk_sql(alias="step")
    in_period, period_params = validity.in_period_sql(alias="relation")
    parts, scored, params = [], [], []
    if named.starts:
        parts.append(f"""
            walk(start_id, entity_id, hops) AS (
                SELECT id, id, 0 FROM unnest(%s::bigint[]) AS id
              UNION
                SELECT walk.start_id, next_entity.id, walk.hops + 1
                FROM walk
                CROSS JOIN LATERAL (
                    SELECT step.object_entity_id AS id FROM facts_relation AS step
                    WHERE step.subject_id = walk.entity_id AND step.object_entity_id IS NOT NULL AND {step_ok}
                  UNION ALL
                    SELECT step.subject_id FROM facts_relation AS step
                    WHERE step.object_entity_id = walk.entity_id AND {step_ok}
                ) AS step_to
                JOIN facts_entity AS next_entity ON next_entity.id = step_to.id
                WHERE walk.hops < %s AND NOT next_entity.is_user AND {_not_a_hub("next_entity.id")}
            ), reached AS (
                SELECT entity_id, min(hops) AS hops, count(DISTINCT start_id) AS starts
                FROM walk GROUP BY entity_id
            ), touching AS (
                SELECT reached.entity_id, relation.id AS relation_id, {in_period} AS in_period
                FROM reached JOIN facts_relation AS relation ON relation.subject_id = reached.entity_id
                WHERE {relation_ok}
              UNION ALL
                SELECT reached.entity_id, relation.id, {in_period}
                FROM reached JOIN facts_relation AS relation ON relation.object_entity_id = reached.entity_id
                WHERE {relation_ok}
            ), degree AS (
                SELECT entity_id, count(*) AS relations FROM touching GROUP BY entity_id
            )""")
        params += [named.starts, *step_params, *step_params, hops]
        params += [*period_params, *relation_params, *period_params, *relation_params]
        scored.append("""
            SELECT touching.relation_id, reached.starts, touching.in_period, 0.0::real AS facet, reached.hops,
                   1.0 / degree.relations AS specificity
            FROM touching
            JOIN reached ON reached.entity_id = touching.entity_id
            JOIN degree ON degree.entity_id = touching.entity_id""")
    if named.hubs and named.facet_words:
        # A hub's relations whose own words (predicate and value: Relation.said_vector, through its index) or other
        # end's name say one of the query's words; one branch per end of the relation and per kind of match.
        branches = []
        for hub_end, other_end in (("subject_id", "object_entity_id"), ("object_entity_id", "subject_id")):
            branches.append(f"""
                SELECT relation.id AS relation_id, {in_period} AS in_period,
                       ts_rank(relation.said_vector, facet_query.query) AS facet
                FROM unnest(%s::bigint[]) AS hub(id) CROSS JOIN facet_query
                JOIN facts_relation AS relation ON relation.{hub_end} = hub.id
                WHERE {relation_ok} AND relation.said_vector @@ facet_query.query""")
            branches.append(f"""
                SELECT relation.id, {in_period}, ts_rank(other.name_vector, facet_query.query)
                FROM unnest(%s::bigint[]) AS hub(id) CROSS JOIN facet_query
                JOIN facts_relation AS relation ON relation.{hub_end} = hub.id
                JOIN facts_entity AS other ON other.id = relation.{other_end}
                WHERE {relation_ok} AND other.name_vector @@ facet_query.query""")
        parts.append(f"""
            facet_query AS (
                SELECT to_tsquery('english', %s) AS query
            ), faceted AS ({" UNION ALL ".join(branches)}
            )""")
        params.append(named.facet_words)
        params += [param for _ in branches for param in (*period_params, named.hubs, *relation_params)]
        scored.append("""
            SELECT relation_id, 1 AS starts, in_period, facet, 0 AS hops, 0.0 AS specificity FROM faceted""")
    sql = f"""
        WITH RECURSIVE {", ".join(part.strip() for part in parts)}, scored AS ({" UNION ALL ".join(scored)}
        ), stated AS (
            SELECT link.{source_column} AS source_id, max(scored.starts) AS named_reached,
                   bool_or(scored.in_period) AS in_period, max(scored.facet) AS facet, min(scored.hops) AS hops,
                   sum(scored.specificity) AS specificity
            FROM scored
            -- Each relation's sources through the (relation, source) index: joined plainly, the planner scans every
            -- link once its estimate of the walk (ten times the named entities) outgrows what it reached.
            CROSS JOIN LATERAL (
                SELECT link.{source_column} FROM {source_link} AS link
                WHERE link.relation_id = scored.relation_id
                OFFSET 0  -- keeps the subquery, and its index lookup, as written
            ) AS link
            GROUP BY link.{source_column}
        )
    """
    return sql, params


def facts_graph_ranking(
    *, scope: FactSearchScope, query: str, hops: int, limit: int, period: Period | None = None
) -> list[GraphRow]:
    """Up to `limit` facts of the scope about the entities the query names and those `hops` (1 or 2) relations from
    them, best first. The entities read are the user's and the agent-wide ones of the scope's agent: relations never
    cross a scope, so neither does the walk, and the facts returned pass the same visibility, validity and filters
    as the other signals'. A question about a `period` ranks the facts whose relations held in it first."""
    named = _named_entities(agent_id=scope.agent_id, user_id=scope.user_id, query=query)
    if not named:  # most questions name no entity (nor a hub with words to pick its relations): no walk is planned
        return []
    validity = _Validity(as_of=scope.as_of, include_history=scope.include_history, period=period)
    stated_sql, stated_params = _stated_sql(
        named=named, hops=hops, validity=validity, source_link="facts_relation_source_facts", source_column="fact_id"
    )
    fact_ok, fact_params = scope.validity_sql(alias="embedding")
    filters, filter_params = scope.fact_filters_sql(alias="fact")
    visible = "(embedding.restricted_to_user_id IS NULL OR embedding.restricted_to_user_id = %s::bigint)"
    sql = f"""
        {stated_sql}
        SELECT stated.source_id, embedding.valid_from, stated.named_reached, stated.hops, stated.specificity
        FROM stated
        -- Each stated fact's row through the (fact, space) index, never a scan of the agent's rows.
        CROSS JOIN LATERAL (
            SELECT embedding.valid_from FROM facts_factembedding AS embedding
            JOIN facts_fact AS fact ON fact.id = embedding.fact_id
            WHERE embedding.fact_id = stated.source_id AND embedding.space_id = %s::bigint
              AND embedding.agent_id = %s::bigint AND {visible} AND {fact_ok} AND {filters}
            LIMIT 1  -- one row per (fact, space); and the planner keeps the subquery (and its index) as written
        ) AS embedding
        ORDER BY stated.named_reached DESC, stated.in_period DESC, stated.facet DESC, stated.hops,
                 stated.specificity DESC, embedding.valid_from DESC, stated.source_id DESC
        LIMIT %s
    """
    params = [
        *stated_params,
        scope.space_id,
        scope.agent_id,
        scope.user_id,
        *fact_params,
        *filter_params,
        limit,
    ]
    with prepared_cursor(search_connection()) as cursor:
        cursor.execute(sql, params)
        return [GraphRow(*row) for row in cursor.fetchall()]


def messages_graph_ranking(
    *, agent_id: int, user_id: int, query: str, hops: int, limit: int, period: Period | None = None
) -> list[int]:
    """The graph signal of turn search (messages_search's graph_ranking, conversations.selectors.message_search): up to
    `limit` ids of the messages the relations about the named entities, and those `hops` relations from them, were
    formed from, best first, in the order facts_graph_ranking gives facts. Every relation is walked, ended ones too:
    what was said stays said when a fact is superseded. The caller keeps the messages in its own scope."""
    named = _named_entities(agent_id=agent_id, user_id=user_id, query=query)
    if not named:
        return []
    stated_sql, stated_params = _stated_sql(
        named=named,
        hops=hops,
        validity=_Validity(include_history=True, period=period),
        source_link="facts_relation_source_messages",
        source_column="message_id",
    )
    sql = f"""
        {stated_sql}
        SELECT stated.source_id FROM stated
        ORDER BY stated.named_reached DESC, stated.in_period DESC, stated.facet DESC, stated.hops,
                 stated.specificity DESC, stated.source_id DESC
        LIMIT %s
    """
    with prepared_cursor(search_connection()) as cursor:
        cursor.execute(sql, [*stated_params, limit])
        return [row[0] for row in cursor.fetchall()]
