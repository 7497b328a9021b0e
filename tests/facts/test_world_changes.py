"""Changes in the world at reconciliation, with the scripted LLM at the provider interface: a new value in a
single-valued slot ends the old statement where the new one begins (both stay current memory), a many-valued slot
never ends by a new value, a curated fact is never ended, the LLM's ENDED ends its target, and the world time the
extraction reply gives (or a malformed one it drops) is what is stored."""

from datetime import date

import pytest

from core.models import LLMCall
from facts.grammar.slots import Slot, key_slot, relation_slot
from facts.models import EntityType, Fact, FactWriter
from facts.services.facts import fact_create, fact_profile_set
from facts.services.graph import EntityMention, RelationStatement, fact_relations_write
from facts.world_time import TimePrecision, WorldTime
from tests.facts.world_changes_support import SAID, add_every_new_fact, said_by_the_user
from tests.formation_support import formation_run

USER = EntityMention(name="user")


def _stored(agent, user, content: str, predicate: str, target: EntityMention | str, **fields) -> Fact:
    fact = fact_create(agent=agent, user=user, scopes=["user"], content=content, **fields)
    statement = (
        RelationStatement(subject=USER, predicate=predicate, object=target)
        if isinstance(target, EntityMention)
        else RelationStatement(subject=USER, predicate=predicate, value=target)
    )
    fact_relations_write(fact=fact, statements=[statement], source_messages=[])
    return fact


def _org(name: str) -> EntityMention:
    return EntityMention(name=name, entity_type=EntityType.ORGANISATION)


def _reply(content: str, predicate: str, target: str, *, entity_type: str = "organisation", **world) -> dict:
    return {
        "facts": [{"content": content, "scope": ["user"], "source": [1], **world}],
        "entities": [{"name": target, "type": entity_type}],
        "relations": [{"fact": 1, "subject": "user", "predicate": predicate, "object": target}],
    }


def _since(year: int, month: int) -> WorldTime:
    return WorldTime(start=date(year, month, 1), start_precision=TimePrecision.MONTH)


def _current(agent, content: str) -> Fact:
    return Fact.objects.get(agent=agent, content=content, valid_to__isnull=True)


@pytest.mark.parametrize(
    ("predicate", "target", "slot"),
    [
        ("works_at", "Globex", Slot("user", "employer", "globex")),
        ("now_works_for", "Globex", Slot("user", "employer", "globex")),
        ("used_to_work_at", "Globex", Slot("user", "employer", "globex")),
        ("works_as", "a nurse", Slot("user", "job_title", "nurse")),
        ("lives_in", "Denver", Slot("user", "home", "denver")),
        ("moved_to", "Denver", Slot("user", "home", "denver")),
        ("married_to", "Sam", Slot("user", "partner", "sam")),
        ("likes", "hiking", None),
        ("owns", "a dog", None),
        ("friend_of", "Sam", None),
        ("visited", "Paris", None),
    ],
)
def test_slot_rules_read_single_valued_slots_from_the_graphs_predicates(predicate, target, slot):
    assert relation_slot(subject="user", predicate=predicate, target=target) == slot


def test_slot_rules_read_roles_beginnings_and_profile_keys():
    assert relation_slot(subject="maria", predicate="wife_of", target="user") == Slot("user", "partner", "maria")
    assert relation_slot(subject="rohan", predicate="manager_of", target="user") == Slot("user", "manager", "rohan")
    assert relation_slot(subject="user", predicate="started_at", target="initech", target_is_organisation=True)
    assert relation_slot(subject="user", predicate="started_at", target="the gym") is None
    assert (key_slot("employer"), key_slot("home_city"), key_slot("partner_name")) == ("employer", "home", "partner")
    assert key_slot("hobby") is None


@pytest.mark.django_db
def test_the_llms_world_time_is_stored_with_the_fact(agent, scripted_llm):
    session = said_by_the_user(agent, "I've lived in Lisbon since May 2019 and I used to smoke.")
    scripted_llm.script(
        "extract_facts",
        {
            "facts": [
                {"content": "The user lives in Lisbon.", "scope": ["user"], "source": [1], "held_from": "2019-05"},
                {
                    "content": "The user used to smoke cigarettes.",
                    "scope": ["user"],
                    "source": [1],
                    "key": "habit",
                    "held_until": "ended",
                },
            ]
        },
    )

    formation_run(session)

    lisbon = _current(agent, "The user lives in Lisbon.")
    assert lisbon.world_time == WorldTime(start=date(2019, 5, 1), start_precision=TimePrecision.MONTH)
    smoked = _current(agent, "The user used to smoke cigarettes.")
    assert smoked.world_time == WorldTime(end_precision=TimePrecision.UNKNOWN)
    assert smoked.key == ""  # what is over is not a profile attribute's current value


@pytest.mark.django_db
def test_a_malformed_held_from_leaves_world_time_unknown_and_is_counted(agent, scripted_llm):
    session = said_by_the_user(agent, "I work at a bakery in Porto these days.")
    scripted_llm.script(
        "extract_facts",
        {
            "facts": [
                {
                    "content": "The user works at a bakery in Porto.",
                    "scope": ["user"],
                    "source": [1],
                    "held_from": "last spring",
                },
                {
                    "content": "The user bakes bread every morning.",
                    "scope": ["user"],
                    "source": [1],
                    "held_from": "2024-13-01",
                    "held_until": "2025",
                },
            ]
        },
    )

    job = formation_run(session)

    assert _current(agent, "The user works at a bakery in Porto.").world_time == WorldTime()
    # The malformed start is dropped; the end given stays.
    bakes = _current(agent, "The user bakes bread every morning.").world_time
    assert (bakes.start, bakes.end, bakes.end_precision) == (None, date(2025, 1, 1), TimePrecision.YEAR)
    call = LLMCall.objects.get(job_id=job.pk, purpose="extract_facts")
    assert call.rule_violations["malformed_world_time"] == 2


@pytest.mark.django_db
def test_a_new_employer_ends_the_old_one_where_it_begins_and_both_stay_current(agent, scripted_llm):
    session = said_by_the_user(agent, "I started at Initech this month.")
    globex = _stored(agent, session.user, "The user works at Globex.", "works_at", _org("Globex"))
    scripted_llm.script(
        "extract_facts", _reply("The user works at Initech.", "works_at", "Initech", held_from="2026-11")
    )
    scripted_llm.script("reconcile_facts", add_every_new_fact)

    job = formation_run(session)

    ended = _current(agent, "The user works at Globex.")
    assert ended.lineage == globex.lineage and ended.version == 2
    assert ended.world_time == WorldTime(end=date(2026, 11, 1), end_precision=TimePrecision.MONTH)
    assert ended.change_reason.startswith("employer changed")
    assert list(ended.source_messages.values_list("content", flat=True)) == ["I started at Initech this month."]
    assert list(ended.closed_by_messages.all()) == []  # the ended version is current: nothing closed it
    assert Fact.objects.get(pk=globex.pk).closed_by_messages.count() == 1  # its predecessor, as history
    initech = _current(agent, "The user works at Initech.")
    assert initech.world_time.start == date(2026, 11, 1) and not initech.world_time.ended
    assert (job.facts_added, job.facts_updated) == (1, 1)


@pytest.mark.django_db
def test_a_new_home_said_without_a_time_ends_the_old_one_roughly_the_day_it_wassaid_by_the_user(agent, scripted_llm):
    session = said_by_the_user(agent, "I live in Denver.")
    _stored(
        agent, session.user, "The user lives in Boston.", "lives_in", EntityMention(name="Boston", entity_type="place")
    )
    scripted_llm.script("extract_facts", _reply("The user lives in Denver.", "lives_in", "Denver", entity_type="place"))
    scripted_llm.script("reconcile_facts", add_every_new_fact)

    formation_run(session)

    boston = _current(agent, "The user lives in Boston.").world_time
    assert boston == WorldTime(end=SAID.date(), end_precision=TimePrecision.APPROXIMATE)
    assert _current(agent, "The user lives in Denver.").world_time.holds_on(SAID.date())


@pytest.mark.django_db
def test_a_new_hobby_does_not_end_an_old_one(agent, scripted_llm):
    session = said_by_the_user(agent, "I like chess too.")
    hiking = _stored(agent, session.user, "The user likes hiking.", "likes", "hiking")
    scripted_llm.script("extract_facts", _reply("The user likes playing chess.", "likes", "chess", entity_type="thing"))
    scripted_llm.script("reconcile_facts", add_every_new_fact)

    formation_run(session)

    still = _current(agent, "The user likes hiking.")
    assert still.pk == hiking.pk and not still.world_time.known
    assert not _current(agent, "The user likes playing chess.").world_time.ended


@pytest.mark.django_db
def test_a_curated_fact_is_never_ended_by_formation(agent, scripted_llm):
    session = said_by_the_user(agent, "I work at Initech now.")
    curated = _stored(
        agent, session.user, "The user works at Globex.", "works_at", _org("Globex"), written_by=FactWriter.OPERATOR
    )
    scripted_llm.script("extract_facts", _reply("The user works at Initech.", "works_at", "Initech"))
    scripted_llm.script(
        "reconcile_facts",
        {"decisions": [{"new": 1, "action": "ENDED", "target": 1, "content": None, "reason": "new job"}]},
    )

    formation_run(session)

    untouched = Fact.objects.get(lineage=curated.lineage, valid_to__isnull=True)
    assert untouched.pk == curated.pk and not untouched.world_time.known
    assert _current(agent, "The user works at Initech.").written_by == FactWriter.FORMATION


@pytest.mark.django_db
def test_the_llms_ended_decision_ends_its_target_when_it_says(agent, scripted_llm):
    session = said_by_the_user(agent, "I moved to Porto in October.")
    lisbon = fact_create(agent=agent, user=session.user, scopes=["user"], content="The user lives in Lisbon.")
    scripted_llm.script(
        "extract_facts",
        {"facts": [{"content": "The user lives in Porto.", "scope": ["user"], "source": [1], "held_from": "2026-10"}]},
    )
    scripted_llm.script(
        "reconcile_facts",
        {
            "decisions": [
                {"new": 1, "action": "ENDED", "target": 1, "content": None, "reason": "moved", "held_until": "2026-10"}
            ]
        },
    )

    formation_run(session)

    prompt = scripted_llm.calls("reconcile_facts")[0].messages[-1]["content"]
    assert "The user lives in Porto. [held from 2026-10]" in prompt  # the model sees each fact's world time
    ended = _current(agent, "The user lives in Lisbon.")
    assert ended.lineage == lisbon.lineage and ended.change_reason == "ended: moved"
    assert ended.world_time == WorldTime(end=date(2026, 10, 1), end_precision=TimePrecision.MONTH)
    assert _current(agent, "The user lives in Porto.").world_time.start == date(2026, 10, 1)


@pytest.mark.django_db
def test_a_past_statement_ends_the_current_one_of_the_same_value(agent, scripted_llm):
    session = said_by_the_user(agent, "I don't work at Globex any more.")
    _stored(agent, session.user, "The user works at Globex.", "works_at", _org("Globex"))
    scripted_llm.script(
        "extract_facts",
        _reply("The user used to work at Globex.", "used_to_work_at", "Globex", held_until="ended"),
    )
    scripted_llm.script("reconcile_facts", add_every_new_fact)

    formation_run(session)

    assert _current(agent, "The user works at Globex.").world_time == WorldTime(end_precision=TimePrecision.UNKNOWN)


@pytest.mark.django_db
def test_a_statement_older_than_the_one_in_its_slot_ends_itself_where_that_one_began(agent, scripted_llm):
    session = said_by_the_user(agent, "Back in 2019 I started at Globex.")
    initech = _stored(
        agent,
        session.user,
        "The user works at Initech.",
        "works_at",
        _org("Initech"),
        world_time=WorldTime(start=date(2024, 3, 1), start_precision=TimePrecision.MONTH),
    )
    scripted_llm.script("extract_facts", _reply("The user works at Globex.", "works_at", "Globex", held_from="2019"))
    scripted_llm.script("reconcile_facts", add_every_new_fact)

    formation_run(session)

    assert _current(agent, "The user works at Initech.").pk == initech.pk
    globex = _current(agent, "The user works at Globex.").world_time
    assert (globex.start, globex.end, globex.end_precision) == (date(2019, 1, 1), date(2024, 3, 1), "month")


@pytest.mark.django_db
def test_a_statement_said_again_after_it_ended_holds_again_and_takes_its_key_back(agent, scripted_llm):
    session = said_by_the_user(agent, "We moved back to Madrid in December.")
    madrid, _ = fact_profile_set(
        agent=agent, user=session.user, key="home_city", content="The user lives in Madrid.", world_time=_since(2018, 1)
    )
    barcelona, _ = fact_profile_set(
        agent=agent,
        user=session.user,
        key="home_city",
        content="The user lives in Barcelona.",
        world_time=_since(2020, 9),
    )
    assert _current(agent, "The user lives in Madrid.").world_time.ended
    scripted_llm.script(
        "extract_facts",
        {
            "facts": [
                {
                    "content": "The user lives in Madrid.",
                    "scope": ["user"],
                    "key": "home_city",
                    "source": [1],
                    "held_from": "2022-12",
                }
            ]
        },
    )
    scripted_llm.script("reconcile_facts", add_every_new_fact)

    formation_run(session)

    again = _current(agent, "The user lives in Madrid.")
    assert again.lineage == madrid.lineage and again.key == "home_city"
    assert (again.held_from, again.held_from_precision, again.held_until) == (
        date(2022, 12, 1),
        TimePrecision.MONTH,
        None,
    )
    before = Fact.objects.get(lineage=madrid.lineage, version=again.version - 1)
    assert before.held_until == date(2020, 9, 1)  # the period it held before stays in history
    moved_away = _current(agent, "The user lives in Barcelona.")
    assert moved_away.lineage == barcelona.lineage and moved_away.key == ""
    assert (moved_away.held_until, moved_away.held_until_precision) == (date(2022, 12, 1), TimePrecision.MONTH)


@pytest.mark.django_db
def test_a_statement_said_again_that_had_not_ended_is_a_duplicate(agent, scripted_llm):
    session = said_by_the_user(agent, "I still live in Madrid.")
    madrid = fact_create(agent=agent, user=session.user, scopes=["user"], content="The user lives in Madrid.")
    scripted_llm.script("extract_facts", {"facts": [{"content": "The user lives in Madrid.", "scope": ["user"]}]})

    formation_run(session)

    assert _current(agent, "The user lives in Madrid.").pk == madrid.pk


@pytest.mark.django_db
def test_a_new_manager_ends_the_old_one_where_the_new_one_begins(agent, scripted_llm):
    session = said_by_the_user(agent, "Rohan is my manager since February.")
    anjali = fact_create(agent=agent, user=session.user, scopes=["user"], content="Anjali is the user's manager.")
    fact_relations_write(
        fact=anjali,
        statements=[RelationStatement(subject=EntityMention(name="Anjali"), predicate="manager_of", object=USER)],
        source_messages=[],
    )
    scripted_llm.script(
        "extract_facts",
        {
            "facts": [
                {"content": "Rohan is the user's manager.", "scope": ["user"], "source": [1], "held_from": "2026-02"}
            ],
            "entities": [{"name": "Rohan", "type": "person"}],
            "relations": [{"fact": 1, "subject": "Rohan", "predicate": "manager_of", "object": "user"}],
        },
    )
    scripted_llm.script("reconcile_facts", add_every_new_fact)

    formation_run(session)

    ended = _current(agent, "Anjali is the user's manager.")
    assert ended.lineage == anjali.lineage and ended.world_time.end == date(2026, 2, 1)
    assert ended.change_reason.startswith("manager changed")
    assert not _current(agent, "Rohan is the user's manager.").world_time.ended
