"""The kept search statistics (document counts and lengths per scope, maintained by database triggers) stay equal to a
recount of the rows under every kind of write, folded or not; and search over them returns what a brute-force
implementation of the same ranking returns on a fixed store."""

import math

import numpy as np
import pytest
from django.conf import settings
from django.db import connection

from conversations.models import Message, MessageEmbedding
from conversations.services.message_embeddings import messages_embed_missing
from core.embeddings.providers import get_embedding_provider
from core.models import CorpusStatisticsChange
from core.search.retrieval import BM25_B, BM25_K1, FULL_STRENGTH_COVERAGE, reciprocal_rank_fusion
from core.services import corpus_statistics_fold
from facts.models import Fact, FactEmbedding
from facts.selectors import facts_search
from facts.services.facts import fact_close, fact_create, fact_supersede, facts_erase
from portability.services.erasure import user_erase
from tests.factories import EndUserFactory
from tests.statistics_support import corpus_statistics_kept, corpus_statistics_recount


def _assert_exact() -> None:
    assert corpus_statistics_kept() == corpus_statistics_recount()


@pytest.mark.django_db
def test_statistics_stay_exact_under_every_write(agent, end_user, session):
    other = EndUserFactory(agent=agent, external_id="user-2")
    shared = fact_create(agent=agent, user=None, scopes=["agent"], content="The office opens at nine on weekdays")
    own = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene keeps two cats, Miso and Tofu")
    both = fact_create(agent=agent, user=other, scopes=["user", "agent"], content="Ana runs the Friday book club")
    fact_create(agent=agent, user=other, scopes=["user"], content="Ana is allergic to peanuts")
    _assert_exact()
    assert corpus_statistics_kept()[("facts.shared", FactEmbedding.objects.get(fact=shared).space_id, agent.pk)][0] == 2

    fact_supersede(fact=own, content="Gene keeps three cats: Miso, Tofu and Udon", reason="new cat")  # a new version
    fact_close(fact=both, reason="the club ended")  # closed: no longer a document
    _assert_exact()

    corpus_statistics_fold()
    assert not CorpusStatisticsChange.objects.exists()
    _assert_exact()

    messages = Message.objects.bulk_create(
        [Message(session=session, role="user", content=f"Message {i} about cats and offices") for i in range(6)]
    )
    messages_embed_missing(message_ids=[message.pk for message in messages])
    MessageEmbedding.objects.filter(message=messages[0]).delete()  # retention drops a message vector
    Fact.objects.filter(pk=shared.pk).update(content="The office opens at eight on weekdays")  # edited in place
    _assert_exact()

    facts_erase(fact_ids=[own.pk])  # a whole lineage, hard-deleted
    _assert_exact()
    user_erase(user=end_user, requested_by="test")  # cascades through messages, sessions, facts and vectors
    _assert_exact()
    agent.delete()  # every scope of the agent goes to zero
    corpus_statistics_fold()
    assert corpus_statistics_kept() == {} == corpus_statistics_recount()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM core_corpusstatistics")
        assert cursor.fetchone()[0] == 0  # scopes that fell to no documents are removed


# A store where words repeat across facts in different proportions, so document frequencies and lengths matter.
SUBJECTS = ["Gene", "Ana", "the user", "Marta's sister", "the landlord"]
PREDICATES = [
    "works night shifts as a nurse in Lisbon",
    "is learning Japanese for a trip to Tokyo",
    "adopted a kitten named Miso",
    "plays tennis every Saturday morning with Ana",
    "is allergic to peanuts and shellfish",
    "moved to Porto in March",
    "bought a new bicycle for commuting to work",
    "reads mystery novels before bed",
]
QUERIES = [
    "Where does Gene work?",
    "Which sport does Ana play on Saturdays?",
    "What is the user allergic to?",
    "Who adopted a kitten?",
    "night shifts nurse",
    "Japanese trip",
]


def _reference_search(*, agent, user, query: str, mode: str, top_k: int) -> list[int]:
    """The ranking facts_search promises, computed by brute force over every fact of the scope in Python: exact
    cosine similarity; BM25 (k1, b; a fact holds a word or not) with document frequencies, size and average length of
    the whole scope, OR matching, coverage strength; weighted reciprocal rank fusion; ties by newest."""
    facts = [
        fact
        for fact in Fact.objects.filter(agent=agent, valid_to__isnull=True)
        if "agent" in fact.scopes or (user is not None and fact.user_id == user.pk)
    ]
    with connection.cursor() as cursor:
        cursor.execute("SELECT tsvector_to_array(to_tsvector('english', %s))", [query])
        lexemes = cursor.fetchone()[0]
        cursor.execute(
            "SELECT id, term.lexeme, cardinality(term.positions), length(search_vector) "
            "FROM facts_fact, unnest(search_vector) AS term WHERE id = ANY(%s)",
            [[fact.pk for fact in facts]],
        )
        term_rows = cursor.fetchall()
    lengths = {fact_id: length for fact_id, _, _, length in term_rows}
    tf = {(fact_id, lexeme): 1 for fact_id, lexeme, _, _ in term_rows}
    n = len(facts)
    average = max(sum(lengths.get(fact.pk, 0) for fact in facts) / max(n, 1), 1)
    df = {lexeme: sum(1 for fact in facts if (fact.pk, lexeme) in tf) for lexeme in lexemes}
    idf = {lexeme: math.log(1 + (n - df[lexeme] + 0.5) / (df[lexeme] + 0.5)) for lexeme in lexemes}
    text = {}
    for fact in facts:
        matched = [lexeme for lexeme in lexemes if (fact.pk, lexeme) in tf]
        if not matched:
            continue
        length = lengths[fact.pk]
        score = sum(
            idf[lexeme]
            * tf[(fact.pk, lexeme)]
            * (BM25_K1 + 1)
            / (tf[(fact.pk, lexeme)] + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
            for lexeme in matched
        )
        strength = min(1.0, sum(idf[lexeme] for lexeme in matched) / sum(idf.values()) / FULL_STRENGTH_COVERAGE) ** 2
        text[fact.pk] = (score, strength)
    text_order = sorted(text, key=lambda fact_id: (-text[fact_id][0], fact_id))[:40]
    vector = get_embedding_provider().embed_query(query)  # as search embeds it (the int8 query graph)
    vectors = {
        embedding.fact_id: np.asarray(embedding.embedding) for embedding in FactEmbedding.objects.filter(fact__in=facts)
    }
    similarity = {fact_id: float(vectors[fact_id] @ vector) for fact_id in vectors}
    vector_order = sorted(similarity, key=lambda fact_id: (-similarity[fact_id], fact_id))[:40]
    use_vector, use_text = mode != "text", mode != "semantic"
    weights = [1.0] * use_vector + [settings.MEMORY_TEXT_WEIGHT] * use_text
    by_id = {fact.pk: fact for fact in facts}
    scores = {}
    for fact_id in {*vector_order[: 40 * use_vector], *text_order[: 40 * use_text]}:
        ranks = [vector_order.index(fact_id) + 1 if fact_id in vector_order else None] * use_vector
        ranks += [text_order.index(fact_id) + 1 if fact_id in text_order else None] * use_text
        strengths = [1.0] * use_vector + [text.get(fact_id, (0, 1.0))[1]] * use_text
        scores[fact_id] = reciprocal_rank_fusion(
            ranks=ranks, weights=weights, strengths=strengths, k=settings.MEMORY_RRF_K
        )
    return sorted(scores, key=lambda fact_id: (-scores[fact_id], -by_id[fact_id].valid_from.timestamp(), -fact_id))[
        :top_k
    ]


@pytest.mark.django_db
def test_search_returns_what_a_brute_force_ranking_returns(agent, end_user):
    other = EndUserFactory(agent=agent, external_id="user-2")
    rng = np.random.default_rng(5)
    for i in range(120):
        owner, scopes = [(end_user, ["user"]), (other, ["user"]), (other, ["user", "agent"]), (None, ["agent"])][i % 4]
        subject, predicate = SUBJECTS[rng.integers(len(SUBJECTS))], PREDICATES[rng.integers(len(PREDICATES))]
        content = f"{subject} {predicate}" + (
            " " + " ".join(rng.choice(["again", "often", "lately"], 2)) if i % 3 else ""
        )
        if not Fact.objects.filter(agent=agent, user=owner, content=content).exists():
            fact_create(agent=agent, user=owner, scopes=scopes, content=content)

    for user in (end_user, None):
        for query in QUERIES:
            for mode in ("hybrid", "text", "semantic"):
                expected = _reference_search(agent=agent, user=user, query=query, mode=mode, top_k=10)
                found = [hit.fact.pk for hit in facts_search(agent=agent, user=user, query=query, mode=mode, top_k=10)]
                assert found == expected, (user, query, mode)
