"""The bundle's token budget holds for any stored text (issue 17: a 1 MB "word" rode along in a 100-token bundle):
Hypothesis properties of the shortening the bundle cuts with, and of whole bundles built on real PostgreSQL from
generated reflections, facts and turns."""

from __future__ import annotations

import pytest
from django.db import transaction
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agents.models import Agent, EndUser
from conversations.models import Session
from core.llm.tokens import count_tokens
from reflections.models import MemoryScope, Reflection
from reflections.selectors.bundle import ELLIPSIS, memory_bundle_build, text_shorten_to_tokens
from tests.factories import AgentFactory, EndUserFactory, MessageFactory, SessionFactory
from tests.fuzzing import examples, tally_add
from tests.tokens_support import FREE_WHITESPACE, MAX_CHARS_PER_TOKEN, any_text, wordpiece_count

pytestmark = pytest.mark.fuzz


@given(text=any_text, max_tokens=st.integers(1, 300))
@settings(max_examples=examples(300))
@example(text="user: " + "z" * 100_000, max_tokens=50)
@example(text="x" * 1_000_000, max_tokens=100)
def test_text_shortened_to_n_tokens_costs_at_most_n_as_the_tokenizer_counts(text, max_tokens):
    tally_add("token counter texts")
    shortened = text_shorten_to_tokens(text=text, max_tokens=max_tokens)

    assert count_tokens(shortened) <= max_tokens
    assert len(shortened) <= MAX_CHARS_PER_TOKEN * max_tokens + FREE_WHITESPACE  # size cannot hide in a count
    if len(shortened) <= 2000:  # the reference is quadratic in a word's length
        assert wordpiece_count(shortened) <= max_tokens
    if shortened != text and shortened:
        assert shortened.endswith(ELLIPSIS) and text.startswith(shortened[: -len(ELLIPSIS)])


hostile_texts = st.one_of(
    any_text.filter(lambda text: text.strip() and "\x00" not in text),
    st.sampled_from(["w" * 50_000, "remember " + "q" * 20_000, " " * 3000 + "x", "\u200b" * 500 + "hidden"]),
)


@pytest.fixture
def scope(db) -> tuple[Agent, EndUser, Session]:
    agent = AgentFactory(external_id="budget-agent")
    user = EndUserFactory(agent=agent)
    return agent, user, SessionFactory(user=user, external_id="budget-session")


@given(
    reflections=st.lists(hostile_texts, max_size=3),
    turns=st.lists(hostile_texts, min_size=1, max_size=4),
    budget=st.integers(1, 400),
)
@settings(max_examples=examples(15), suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_bundle_never_costs_more_than_its_budget(scope, reflections, turns, budget):
    tally_add("token counter texts")
    agent, user, session = scope
    savepoint = transaction.savepoint()
    try:
        for content in reflections:
            Reflection.objects.create(agent=agent, user=user, scope=MemoryScope.USER, content=content)
        for content in turns:
            MessageFactory(session=session, content=content, token_count=0)
        bundle = memory_bundle_build(
            agent=agent,
            user=user,
            session=session,
            query="what do you remember",
            token_budget=budget,
            record_access=False,
        )
    finally:
        transaction.savepoint_rollback(savepoint)

    assert bundle.tokens_used == sum(part.tokens for part in bundle.parts.values()) <= budget
    assert count_tokens(bundle.text) <= budget
    assert len(bundle.text) <= MAX_CHARS_PER_TOKEN * budget + FREE_WHITESPACE
