"""The development set for time (tests/fixtures/time_devset/) is well formed and fair, and the scorer's matching rules
(benchmarks/lib/time_devset.py) and scripted LLM (benchmarks/lib/scripted_llm.py) do what they say, on hand-made
hits and requests: no stack, no network."""

from __future__ import annotations

import copy
import json
from datetime import UTC, date, datetime

import jsonschema
import pytest

from benchmarks.lib.scripted_llm import ScriptedLLM
from benchmarks.lib.time_devset import (
    PRECISIONS,
    TYPES,
    Expected,
    FactHit,
    Question,
    content_matches,
    date_matches,
    judge,
    load_set,
    scores,
    world_time_text_valid,
)
from facts.services.extraction import SCHEMA, _validate, relations_of_reply
from tests.llm_stub_server import PURPOSE_MARKERS

SET = load_set()


def _start(text: str | None) -> tuple[str | None, str]:
    """A held_from string as the API's world-time start and precision."""
    if not text:
        return None, ""
    parts = text.lstrip("~").split("-")
    precision = "approximate" if text.startswith("~") else ("year", "month", "day")[len(parts) - 1]
    return "-".join(parts + ["01"] * (3 - len(parts))), precision


# --- the set's shape ------------------------------------------------------------------------------------------------


def test_the_set_has_at_least_150_questions_over_at_least_20_conversations():
    questions = [question for conversation in SET for question in conversation.questions]

    assert len(SET) >= 20
    assert len(questions) >= 150
    assert {question.type for question in questions} == set(TYPES)
    assert len({question.id for question in questions}) == len(questions)


def test_every_question_has_a_known_type_what_it_expects_and_user_messages_of_its_own_as_evidence():
    for conversation in SET:
        user_messages = {
            message.id for session in conversation.sessions for message in session.messages if message.role == "user"
        }
        for question in conversation.questions:
            assert question.type in TYPES, question.id
            assert question.expected.contains, question.id
            assert question.evidence and set(question.evidence) <= user_messages, question.id
            if question.type == "when":
                assert question.expected.date is not None and question.expected.precision in PRECISIONS, question.id
            if question.type == "held_at":
                assert question.at is not None, question.id


def test_sessions_are_in_date_order_in_the_past_and_alternate_user_and_assistant():
    now = datetime.now(UTC)
    for conversation in SET:
        said = [datetime.fromisoformat(m.created_at) for s in conversation.sessions for m in s.messages]
        assert said == sorted(said) and said[-1] < now, conversation.id
        for session in conversation.sessions:
            assert [m.role for m in session.messages][:2] == ["user", "assistant"], session.id


def test_every_scripted_extraction_parses_under_the_extraction_schema_with_world_time_strings():
    for conversation in SET:
        for session in conversation.sessions:
            reply = copy.deepcopy(session.extraction)
            jsonschema.validate(reply, SCHEMA)
            parsed = _validate(reply)
            relations = relations_of_reply(parsed)
            assert sum(len(found) for found in relations.values()) == len(reply["relations"]), session.id
            user_positions = {n for n, m in enumerate(session.messages, start=1) if m.role == "user"}
            for fact in parsed["facts"]:
                assert fact["source"] and set(fact["source"]) <= user_positions, (session.id, fact["content"])
                held_from, held_until = fact.get("held_from"), fact.get("held_until")
                assert held_from is None or world_time_text_valid(held_from), (session.id, held_from)
                assert held_until is None or held_until == "ended" or world_time_text_valid(held_until), held_until
                if held_from and held_until and held_until != "ended":
                    assert _start(held_from)[0] <= _start(held_until)[0], (session.id, fact["content"])


def test_every_reconciliation_names_an_earlier_fact_of_its_conversation():
    for conversation in SET:
        earlier: set[str] = set()
        for session in conversation.sessions:
            for item in session.reconciliation:
                assert item["action"] in ("UPDATE", "DELETE") and item["target"] in earlier, (session.id, item)
                assert 1 <= item["new"] <= len(session.extraction["facts"]), (session.id, item)
            earlier |= {fact["content"] for fact in session.extraction["facts"]}


def test_every_question_can_be_answered_from_the_scripted_extraction():
    """Fairness: a good LLM's facts hold each answer (and, for a when-question, its date as a world-time start)."""
    for conversation in SET:
        facts = [fact for session in conversation.sessions for fact in session.extraction["facts"]]
        for question in conversation.questions:
            answering = [fact for fact in facts if content_matches(fact["content"], question.expected)]
            assert answering, question.id
            if question.type == "when":
                assert question.expected.date is not None
                assert any(
                    date_matches(
                        start=_start(fact.get("held_from"))[0],
                        start_precision=_start(fact.get("held_from"))[1],
                        expected=question.expected.date,
                        precision=question.expected.precision,
                    )
                    for fact in answering
                ), question.id


def _bound(text: str | None) -> date | None:
    start = _start(text if text != "ended" else None)[0]
    return date.fromisoformat(start) if start else None


def _may_hold(fact: dict, moment: date) -> bool:
    """By the fact's own world time: started by then (or start unknown) and not ended by then (or end unknown)."""
    held_from, held_until = _bound(fact.get("held_from")), _bound(fact.get("held_until"))
    return (held_from is None or held_from <= moment) and (held_until is None or held_until > moment)


def test_every_current_and_held_at_answer_is_in_a_fact_whose_world_time_allows_it():
    """Fairness for search by world time: the present is answered by a fact not ended (an "ended" of unknown date
    counts as ended), a held-at question by a fact that may have held at its moment."""
    today = datetime.now(UTC).date()
    for conversation in SET:
        facts = [fact for session in conversation.sessions for fact in session.extraction["facts"]]
        for question in conversation.questions:
            answering = [fact for fact in facts if content_matches(fact["content"], question.expected)]
            if question.type == "current":
                assert any(f.get("held_until") != "ended" and _may_hold(f, today) for f in answering), question.id
            if question.type == "held_at":
                assert question.at is not None
                assert any(_may_hold(fact, question.at) for fact in answering), question.id


# --- the matching rules ---------------------------------------------------------------------------------------------


def _question(kind: str = "current", **expected) -> Question:
    return Question(
        id="q",
        conversation="c",
        type=kind,
        text="Where does the user work now?",
        expected=Expected(**({"contains": ("Initech",), "excludes": ("Globex",)} | expected)),
        evidence=("c-s3-m1",),
        at=date(2020, 6, 1) if kind == "held_at" else None,
    )


@pytest.mark.parametrize(
    ("text", "correct"),
    [
        ("The user works at Initech as a product analyst.", True),
        ("The user works at INITECH.", True),
        ("The user used to work at Globex.", False),
        ("The user left Globex and started at Initech.", False),  # cannot be told from the wrong answer
        ("The user lives in Austin.", False),
    ],
)
def test_a_hit_answers_when_it_names_what_is_expected_and_nothing_excluded(text, correct):
    assert content_matches(text, _question().expected) is correct


def test_keywords_match_at_the_start_of_a_word_with_alternatives_and_without_accents():
    expected = Expected(contains=("teach|nurse", "Malmö"), excludes=("run",))

    assert content_matches("The user teaches handball in Malmo.", expected)
    assert content_matches("The user is a nurse in MALMÖ.", expected)
    assert not content_matches("The user preaches in Malmö.", expected)  # "teach" inside a word
    assert content_matches("The user teaches at brunch in Malmö.", expected)  # "run" inside a word is no match
    assert not content_matches("The user teaches and runs in Malmö.", expected)


@pytest.mark.parametrize(
    ("start", "precision", "expected", "expected_precision", "matches"),
    [
        ("2023-05-08", "day", date(2023, 5, 1), "month", True),
        ("2023-05-01", "month", date(2023, 5, 1), "month", True),
        ("2023-06-01", "month", date(2023, 5, 1), "month", False),
        ("2023-01-01", "year", date(2023, 5, 1), "month", False),  # coarser than asked
        ("2023-01-01", "year", date(2023, 1, 1), "year", True),
        ("2025-06-28", "day", date(2025, 6, 28), "day", True),
        ("2025-06-27", "day", date(2025, 6, 28), "day", False),
        ("2018-06-01", "approximate", date(2018, 1, 1), "approximate", True),
        ("2019-03-01", "month", date(2018, 1, 1), "approximate", False),
        (None, "", date(2018, 1, 1), "year", False),
        ("2018-01-01", "unknown", date(2018, 1, 1), "year", False),
    ],
)
def test_a_world_time_start_gives_the_expected_date_at_its_precision(
    start, precision, expected, expected_precision, matches
):
    assert (
        date_matches(start=start, start_precision=precision, expected=expected, precision=expected_precision) is matches
    )


def test_current_held_at_and_before_after_questions_are_scored_on_the_first_fact_hit():
    right, wrong = FactHit("The user works at Initech."), FactHit("The user used to work at Globex.")

    assert judge(_question(), facts=[right, wrong], turns=[]).correct
    stale_first = judge(_question(), facts=[wrong, right], turns=["c-s3-m1"])
    assert not stale_first.correct and stale_first.fact_rank == 2 and stale_first.turn_at_5


def test_a_when_question_is_found_by_an_evidence_turn_or_a_dated_fact_in_the_first_five():
    question = _question("when", contains=("Initech",), excludes=(), date=date(2023, 5, 1), precision="month")
    undated = FactHit("The user started at Initech.")
    dated = FactHit(
        "The user started at Initech.",
        world_time={"start": "2023-05-08", "start_precision": "day", "end": None, "end_precision": ""},
    )
    others = [FactHit(f"Filler fact {n}.") for n in range(5)]

    assert judge(question, facts=[undated], turns=["x", "x", "x", "x", "c-s3-m1"]).correct
    assert not judge(question, facts=[undated], turns=["x", "x", "x", "x", "x", "c-s3-m1"]).correct
    assert judge(question, facts=[*others[:4], dated], turns=[]).fact_date_at_5
    assert not judge(question, facts=[*others, dated], turns=[]).correct


def test_held_at_questions_asked_with_holds_at_are_scored_apart_and_averaged_only_where_asked():
    right, wrong = FactHit("The user works at Initech."), FactHit("The user used to work at Globex.")
    held = _question("held_at")
    verdicts = [
        judge(held, facts=[wrong], turns=[], facts_holds_at=[right]),
        judge(_question(), facts=[right], turns=[]),
    ]

    table = scores(verdicts)

    assert verdicts[0].holds_at_top1 and not verdicts[0].correct
    assert table["held_at"]["holds_at_top1"] == 100.0 and table["held_at"]["headline"] == 0.0
    assert table["current"]["holds_at_top1"] is None and table["overall"]["headline"] == 50.0


# --- the scripted LLM -----------------------------------------------------------------------------------------------


def _body(purpose: str, user: str) -> dict:
    return {"messages": [{"role": "system", "content": PURPOSE_MARKERS[purpose]}, {"role": "user", "content": user}]}


def test_the_scripted_llm_answers_a_session_s_extraction_with_its_sources_numbered_as_the_window_is():
    conversation = SET[0]
    session = conversation.sessions[0]
    stub = ScriptedLLM(conversations=[conversation])
    # The window starts at the session's third message: position 3 is number 1 there.
    lines = [f"[{n}] [2021-02-14] {m.role}: {m.content}" for n, m in enumerate(session.messages[2:], start=1)]

    reply = json.loads(stub.healthy_content(_body("extract_facts", "Conversation (numbered):\n\n" + "\n".join(lines))))

    expected = [fact["content"] for fact in session.extraction["facts"]]
    assert [fact["content"] for fact in reply["facts"]] == expected
    moved = {fact["content"]: fact["source"] for fact in reply["facts"]}
    assert moved["The user goes bouldering three evenings a week."] == [1]
    assert moved["The user works as a data analyst at Globex."] == []  # message 1 is outside the window
    assert stub.served["extraction"] == 1


def test_the_scripted_llm_updates_or_ends_an_earlier_fact_only_when_it_is_shown_and_adds_the_rest():
    conversation = SET[0]
    stub = ScriptedLLM(conversations=[conversation])
    listing = (
        "EXISTING facts:\n1. The user goes bouldering three evenings a week.\n2. The user's partner is Sam.\n\n"
        "NEW facts (with the existing facts similar to each):\n"
        "1. The user goes bouldering twice a week.  (similar: 1)\n"
        "2. The user and Sam split up in April 2024.  (similar: 2)\n"
        "3. The user still does pottery on Thursdays.  (similar: 1)\n"
        "4. The user's partner is Sam.  (similar: 2)"
    )

    decisions = json.loads(stub.healthy_content(_body("reconcile_facts", listing)))["decisions"]

    assert [(d["new"], d["action"], d["target"]) for d in decisions] == [
        (1, "UPDATE", 1),
        (2, "DELETE", 2),
        (3, "ADD", None),
        (4, "NONE", 2),
    ]
    assert decisions[0]["content"] == "The user goes bouldering twice a week."
