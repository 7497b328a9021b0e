"""The offline extractor (formation/offline/provider.py) on its unit fixtures, measured by
benchmarks/offline_extractor.py: atomic facts, and reflections only where the user asked for something (no topic
lists, no note every user gets)."""

from __future__ import annotations

import json

import facts.grammar.graph as fact_graph
from benchmarks.offline_extractor import extractor_measure
from core.llm.base import LLMRequest
from formation.offline.provider import OfflineLLM


def _ask(purpose: str, *texts: str) -> dict:
    messages = [{"number": n, "role": "user", "text": text, "date": ""} for n, text in enumerate(texts, start=1)]
    request = LLMRequest(purpose=purpose, messages=[], inputs={"messages": messages, "max_words": 30})
    return json.loads(OfflineLLM().complete(request).text)


def test_one_sentence_with_two_statements_makes_two_facts():
    facts = _ask("extract_facts", "My sister is called Ana and she visits on Saturday.")["facts"]

    assert [fact["content"] for fact in facts] == [
        "The user's sister is called Ana.",
        "The user's sister Ana visits on Saturday.",
    ]


def test_a_pronoun_with_nothing_it_can_mean_makes_no_fact():
    assert _ask("extract_facts", "She said the train was late. It was raining all day.")["facts"] == []
    # "she" cannot be the user's car.
    facts = _ask("extract_facts", "My car is old. She said so.")["facts"]
    assert [fact["content"] for fact in facts] == ["The user's car is old."]


def test_a_vague_conversation_gets_no_reflection_at_all():
    notes = _ask("reflect", "I need some help planning.", "I need some help with planning some things.")
    assert notes == {"agent": [], "user": [], "session": []}


def test_figures_on_the_fixtures():
    written_against = extractor_measure(OfflineLLM(), split="conversations")
    held_out = extractor_measure(OfflineLLM(), split="held_out")

    assert written_against["facts"]["precision"] >= 0.95 and written_against["facts"]["recall"] >= 0.9
    assert written_against["facts"]["compound_sentences_recall"] >= 0.9
    assert held_out["facts"]["precision"] >= 0.85 and held_out["facts"]["recall"] >= 0.5
    for figures in (written_against, held_out):
        assert figures["reflections"]["noise"] == 0
        assert figures["reflections"]["same_text_for_several_users"] == 0
        assert figures["reflections"]["recall"] >= 0.8


def test_every_informative_clause_of_a_named_speaker_becomes_a_statement_about_them():
    facts = _ask(
        "extract_facts",
        "Rhea: I finally finished my first half marathon yesterday! My knees are not happy though.",
        "Rhea: We walked like twenty dogs at the shelter. Started volunteering at the shelter last month.",
    )["facts"]

    assert [fact["content"] for fact in facts] == [
        "Rhea finally finished their first half marathon yesterday.",
        "Rhea's knees are not happy though.",
        "Rhea and others walked like twenty dogs at the shelter.",
        "Rhea started volunteering at the shelter last month.",
    ]


def test_a_clause_that_leans_on_the_conversation_makes_no_fact():
    facts = _ask(
        "extract_facts",
        "Tom: I loved that you did it. I saw your photos. It's so cool, I'm so glad!",
        "Tom: I bought it yesterday, it reminds me of you.",
    )["facts"]

    assert facts == []


def test_the_entity_graph_reads_the_parse_the_grammar_checks_made(monkeypatch):
    texts = ("My sister Maria works at Acme Corp in Berlin.", "I live in Porto and I love hiking.")
    reparsed: list[str] = []
    pipeline = fact_graph.english_pipeline()

    class Counting:
        def pipe(self, contents):
            reparsed.extend(contents)
            return pipeline.pipe(contents)

    monkeypatch.setattr(fact_graph, "english_pipeline", lambda: Counting())
    reply = _ask("extract_facts", *texts)
    monkeypatch.undo()

    assert reply["relations"] and reparsed == []  # every fact's parse came from its check
    assert fact_graph.graph_of_facts(reply["facts"]) == {  # the same graph as a parse of its own
        "entities": reply["entities"],
        "relations": reply["relations"],
    }


def test_what_a_reader_called_junk_is_not_formed():
    facts = _ask(
        "extract_facts",
        "I used to work at Globex, but last week I started at Initech.",
        "I used to work at Globex but last week I started at Initech.",
        "Kofi: I'm excited to get started. I'm doing easy exercises to keep it strong.",
        "Mina: I moved to Rotterdam for university and there was no time.",
        "Mina: I made this bowl in my class.",
    )["facts"]

    assert [fact["content"] for fact in facts] == [
        "The user used to work at Globex.",
        "The user started at Initech.",
        "Kofi is doing easy exercises.",
        "Mina lives in Rotterdam for university.",
        "Mina moved to Rotterdam for university.",
        "Mina made the bowl in their class.",
    ]


def test_a_capitalised_common_noun_is_no_person_and_a_users_thing_stated_by_a_copula_is_an_attribute():
    reply = _ask(
        "extract_facts",
        "Exercise helps me a lot when work gets stressful.",
        "I love Nature's beauty. My favourite colour is purple.",
    )

    assert reply["entities"] == []
    assert [(relation["subject"], relation["predicate"], relation.get("value")) for relation in reply["relations"]] == [
        ("user", "loves", "Nature's beauty"),
        ("user", "favourite_colour", "purple"),
    ]


def test_a_name_that_is_also_an_english_noun_stays_a_person():
    graph = fact_graph.graph_of_facts(
        [
            {"content": "Ana signed up for the city marathon in October."},
            {"content": "Rose adopted a dog named Biscuit."},
            {"content": "Hope works at Initech."},
        ]
    )

    people = {entity["name"] for entity in graph["entities"] if entity["type"] == "person"}
    assert {"Ana", "Rose", "Hope"} <= people
