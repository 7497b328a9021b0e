"""The graph signal of fact search: the entities a query names, walked one or two relations out, and the facts that
state the relations they take part in, ranked for fusion (facts.selectors.search).

The query's names are its word n-grams (up to MAX_NAME_WORDS words, "my" read as "the user's" and a trailing "'s"
dropped): entity aliases are stored normalised (facts.services.graph.entity_name_normalize), so matching is one
array overlap, with no NLP on the search path. When the query names any entity, a second statement walks from them
and reads the facts with their scope; when it names none (most questions), that statement is not even planned.

The user's own entity is never a start nor a step of the walk: every first-person relation touches it, so through it
everything would be two hops from everything. Nor is a hub, an entity with more than HUB_RELATIONS current relations
(in a conversation between two people, each of them): like a word found in every document, naming it says little,
and expanding from it would rank half the memory; the text and vector signals find what is said about it.

A fact ranks by how many of the named entities its relations reach, then by how near (hops), then by how specific
the entities it touches are (a fact about an entity with few relations says more about it than one about an entity
named in many), then the most recent first."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from core.runtime.db_routers import search_connection
from core.runtime.prepared_statements import prepared_cursor
from facts.selectors.search_scope import FactSearchScope
from facts.services.graph import entity_name_normalize

MAX_NAME_WORDS = 4
HUB_RELATIONS = 30
MAX_QUERY_NAMES = 200
_WORD = re.compile(r"[\w][\w'’.-]*")
_POSSESSIVE = re.compile(r"['’]s?$")


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


def _relation_validity_sql(scope: FactSearchScope, *, alias: str) -> tuple[str, list]:
    """The relations the search may walk: current ones, those valid at `as_of`, or all with the history."""
    if scope.as_of is not None:
        return f"{alias}.valid_from <= %s AND ({alias}.valid_to IS NULL OR {alias}.valid_to > %s)", [
            scope.as_of,
            scope.as_of,
        ]
    if scope.include_history:
        return "true", []
    return f"{alias}.valid_to IS NULL", []


def facts_graph_ranking(*, scope: FactSearchScope, query: str, hops: int, limit: int) -> list[GraphRow]:
    """Up to `limit` facts of the scope about the entities the query names and those `hops` (1 or 2) relations from
    them, best first. The entities read are the user's and the agent-wide ones of the scope's agent: relations never
    cross a scope, so neither does the walk, and the facts returned pass the same visibility, validity and filters
    as the other signals'."""
    names = query_names(query)
    if not names:
        return []
    relation_ok, relation_params = _relation_validity_sql(scope, alias="relation")
    step_ok, step_params = _relation_validity_sql(scope, alias="step")
    fact_ok, fact_params = scope.validity_sql(alias="embedding")
    filters, filter_params = scope.fact_filters_sql(alias="fact")
    user_condition = "entity.user_id = %s::bigint" if scope.user_id else "false"

    def not_a_hub(entity: str) -> str:
        """Counts at most HUB_RELATIONS + 1 relations on each side, each through its index: a hub costs no more
        than any other entity."""
        sides = [
            f"(SELECT count(*) FROM (SELECT 1 FROM facts_relation AS around WHERE around.{column} = {entity} "
            f"AND around.valid_to IS NULL LIMIT {HUB_RELATIONS + 1}) AS bounded)"
            for column in ("subject_id", "object_entity_id")
        ]
        return f"{' + '.join(sides)} <= {HUB_RELATIONS}"

    # Every join on a relation's two ends is written as two joins, one per end, so that each uses its own index
    # (relation_subject, relation_object): an OR of the two would scan every relation.
    visible = "(embedding.restricted_to_user_id IS NULL OR embedding.restricted_to_user_id = %s::bigint)"
    named_sql = f"""
        SELECT entity.id FROM facts_entity AS entity
        WHERE entity.agent_id = %s::bigint AND ({user_condition} OR entity.user_id IS NULL)
          AND entity.merged_into_id IS NULL AND NOT entity.is_user
          AND entity.aliases && %s::varchar(200)[] AND {not_a_hub("entity.id")}
    """
    with prepared_cursor(search_connection()) as cursor:
        # First the entities named: most questions name none, and then the walk's statement is not even planned.
        cursor.execute(named_sql, [scope.agent_id, *([scope.user_id] if scope.user_id else []), names])
        named = [row[0] for row in cursor.fetchall()]
    if not named:
        return []
    sql = f"""
        WITH RECURSIVE walk(start_id, entity_id, hops) AS (
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
            WHERE walk.hops < %s AND NOT next_entity.is_user AND {not_a_hub("next_entity.id")}
        ), reached AS (
            SELECT entity_id, min(hops) AS hops, count(DISTINCT start_id) AS starts
            FROM walk GROUP BY entity_id
        ), touching AS (
            SELECT reached.entity_id, relation.id AS relation_id
            FROM reached JOIN facts_relation AS relation ON relation.subject_id = reached.entity_id
            WHERE {relation_ok}
          UNION ALL
            SELECT reached.entity_id, relation.id
            FROM reached JOIN facts_relation AS relation ON relation.object_entity_id = reached.entity_id
            WHERE {relation_ok}
        ), degree AS (
            SELECT entity_id, count(*) AS relations FROM touching GROUP BY entity_id
        ), stated AS (
            SELECT link.fact_id, max(reached.starts) AS named_reached, min(reached.hops) AS hops,
                   sum(1.0 / degree.relations) AS specificity
            FROM touching
            JOIN reached ON reached.entity_id = touching.entity_id
            JOIN degree ON degree.entity_id = touching.entity_id
            -- Each relation's facts through the (relation, fact) index: joined plainly, the planner scans every link
            -- once its estimate of the walk (ten times the named entities) outgrows what it reached.
            CROSS JOIN LATERAL (
                SELECT link.fact_id FROM facts_relation_source_facts AS link
                WHERE link.relation_id = touching.relation_id
                OFFSET 0  -- keeps the subquery, and its index lookup, as written
            ) AS link
            GROUP BY link.fact_id
        )
        SELECT stated.fact_id, embedding.valid_from, stated.named_reached, stated.hops, stated.specificity
        FROM stated
        -- Each stated fact's row through the (fact, space) index, never a scan of the agent's rows.
        CROSS JOIN LATERAL (
            SELECT embedding.valid_from FROM facts_factembedding AS embedding
            JOIN facts_fact AS fact ON fact.id = embedding.fact_id
            WHERE embedding.fact_id = stated.fact_id AND embedding.space_id = %s::bigint
              AND embedding.agent_id = %s::bigint AND {visible} AND {fact_ok} AND {filters}
            LIMIT 1  -- one row per (fact, space); and the planner keeps the subquery (and its index) as written
        ) AS embedding
        ORDER BY stated.named_reached DESC, stated.hops, stated.specificity DESC, embedding.valid_from DESC,
                 stated.fact_id DESC
        LIMIT %s
    """
    params = [
        named,
        *step_params,
        *step_params,
        hops,
        *relation_params,
        *relation_params,
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
