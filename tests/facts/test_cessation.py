"""Statements that something stopped (facts.grammar.cessation) end, in the world, the current statements of the same
person that say what stopped, whatever their slot, at reconciliation (facts.services.world_changes.cessation_ends);
with the scripted LLM at the provider interface, on real PostgreSQL (its full-text search finds what stopped)."""

from datetime import date

import pytest

from facts.grammar.cessation import Cessation, cessation_read
from facts.models import Fact, FactWriter
from facts.services.facts import fact_create
from facts.world_time import TimePrecision, event_on
from tests.facts.world_changes_support import SAID, add_every_new_fact, said_by_the_user
from tests.formation_support import formation_run


@pytest.mark.parametrize(
    ("content", "cessation"),
    [
        ("The user gave up flamenco in 2020.", Cessation("user", ("flamenco",))),
        ("The user quit smoking in February 2020.", Cessation("user", ("smoking",))),
        ("The user stopped learning German with the app.", Cessation("user", ("learning", "german", "app"))),
        ("The user left the band The Static in September 2020.", Cessation("user", ("band", "static"))),
        ("The user left SEAT in March 2025.", Cessation("user", ("seat",))),
        ("The user sold the Guadalajara taquería to his cousin Beto.", Cessation("user", ("guadalajara", "taquería"))),
        ("The user can't watch horror films anymore.", Cessation("user", ("horror", "films"))),
        ("The user is no longer a freelancer.", Cessation("user", ("freelancer",))),
        ("The user and Elena ended their relationship.", Cessation("user", ("elena",), relationship=True)),
        ("The user and Tasha broke up in January 2022.", Cessation("user", ("tasha",), relationship=True)),
        ("The user's dog Scout died in September 2023.", Cessation("user", ("scout",))),
        ("Kasia stopped working nights.", Cessation("kasia", ("working", "nights"))),
    ],
)
def test_a_statement_that_something_stopped_says_what(content, cessation):
    assert cessation_read(content) == cessation


@pytest.mark.parametrize(
    "content",
    [
        "The user dances flamenco on Tuesdays.",
        "The user wants to stop smoking.",
        "The user left early.",
        "The user left for Paris.",
        "The user stopped by the bakery.",
        "The user and Jonas are separating.",
    ],
)
def test_a_statement_that_nothing_stopped_is_no_cessation(content):
    assert cessation_read(content) is None


def _stored(agent, user, content: str, **fields) -> Fact:
    return fact_create(agent=agent, user=user, scopes=["user"], content=content, **fields)


def _extracted(*contents: str, **world) -> dict:
    return {"facts": [{"content": content, "scope": ["user"], "source": [1], **world} for content in contents]}


def _current(agent, content: str) -> Fact:
    return Fact.objects.get(agent=agent, content=content, valid_to__isnull=True)


@pytest.mark.django_db
def test_giving_up_a_hobby_ends_it_when_it_stopped_and_leaves_the_others(agent, scripted_llm):
    session = said_by_the_user(agent, "I gave up flamenco in 2020, I do yoga now.")
    _stored(agent, session.user, "The user dances flamenco on Tuesdays and Fridays.")
    _stored(agent, session.user, "The user does yoga.")
    scripted_llm.script("extract_facts", _extracted("The user gave up flamenco in 2020.", held_from="2020"))
    scripted_llm.script("reconcile_facts", add_every_new_fact)

    formation_run(session)

    flamenco = _current(agent, "The user dances flamenco on Tuesdays and Fridays.")
    assert (flamenco.held_until, flamenco.held_until_precision) == (date(2020, 1, 1), TimePrecision.YEAR)
    assert not flamenco.world_time.holds_on(SAID.date())
    assert flamenco.change_reason.startswith("stopped: The user gave up flamenco")
    assert not _current(agent, "The user does yoga.").world_time.ended
    assert not _current(agent, "The user gave up flamenco in 2020.").world_time.ended


@pytest.mark.django_db
def test_what_the_user_cannot_do_anymore_ends_what_said_they_did_and_only_that(agent, scripted_llm):
    session = said_by_the_user(agent, "I can't watch horror films anymore since the baby came.")
    _stored(agent, session.user, "The user loves horror films.")
    _stored(agent, session.user, "The user reads horror novels.")
    scripted_llm.script("extract_facts", _extracted("The user can't watch horror films anymore."))
    scripted_llm.script("reconcile_facts", add_every_new_fact)

    formation_run(session)

    films = _current(agent, "The user loves horror films.")
    assert films.world_time.ended and films.held_until == SAID.date()  # roughly the day it was said
    assert films.held_until_precision == TimePrecision.APPROXIMATE
    assert not _current(agent, "The user reads horror novels.").world_time.ended


@pytest.mark.django_db
def test_a_couples_ending_ends_their_relationship_not_everything_naming_the_partner(agent, scripted_llm):
    session = said_by_the_user(agent, "Elena and I broke up at New Year.")
    _stored(agent, session.user, "The user is dating Elena, a dance teacher.")
    _stored(agent, session.user, "The user takes salsa lessons from Elena.")
    scripted_llm.script("extract_facts", _extracted("The user and Elena ended their relationship."))
    scripted_llm.script("reconcile_facts", add_every_new_fact)

    formation_run(session)

    assert _current(agent, "The user is dating Elena, a dance teacher.").world_time.ended
    assert not _current(agent, "The user takes salsa lessons from Elena.").world_time.ended


@pytest.mark.django_db
def test_curated_statements_events_and_other_peoples_are_never_ended(agent, scripted_llm):
    session = said_by_the_user(agent, "I quit smoking last month.")
    curated = _stored(agent, session.user, "The user smokes a pack a day.", written_by=FactWriter.OPERATOR)
    cigar = _stored(
        agent, session.user, "The user smoked a cigar at the wedding.", world_time=event_on(date(2024, 6, 1))
    )
    kasia = _stored(agent, session.user, "Kasia smokes menthols.")
    scripted_llm.script("extract_facts", _extracted("The user quit smoking."))
    scripted_llm.script("reconcile_facts", add_every_new_fact)

    formation_run(session)

    assert _current(agent, "The user smokes a pack a day.").pk == curated.pk
    assert _current(agent, "The user smoked a cigar at the wedding.").pk == cigar.pk
    assert _current(agent, "Kasia smokes menthols.").pk == kasia.pk
