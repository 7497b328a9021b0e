"""Importers carry world time where their source has it: LoCoMo's observations read against their session's date
(the day their relative times were said), mem0's memories against the day their text was written."""

import json
from datetime import date
from io import StringIO

import pytest
from django.core.management import call_command

from facts.models import Fact
from facts.world_time import TimePrecision, WorldTime


def _import(format: str, path) -> None:
    call_command("import_memories", str(path), "--format", format, "--agent", "imported", stdout=StringIO())


def _world(content: str) -> WorldTime:
    return Fact.objects.get(content=content).world_time


@pytest.mark.django_db
def test_locomo_observations_resolve_their_times_against_the_sessions_date(tmp_path):
    turns = [{"speaker": "Ana", "dia_id": "D1:1", "text": "I ran a race last Saturday!"}]
    sample = {
        "sample_id": "conv-w1",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns,
        },
        "observation": {
            "session_1_observation": {
                "Ana": [
                    ["Ana ran a charity race last Saturday.", "D1:1"],
                    ["Ana used to live in Boston.", "D1:1"],
                    ["Ana enjoys running with friends.", "D1:1"],
                ]
            }
        },
        "qa": [],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))

    _import("locomo", path)

    assert _world("Ana ran a charity race last Saturday.") == WorldTime(
        start=date(2023, 5, 6), start_precision="day", end=date(2023, 5, 7), end_precision="day"
    )
    assert _world("Ana used to live in Boston.") == WorldTime(end_precision=TimePrecision.UNKNOWN)
    assert not _world("Ana enjoys running with friends.").known


@pytest.mark.django_db
def test_mem0_memories_resolve_their_times_against_when_they_were_written(tmp_path):
    memories = [
        {"id": "m1", "memory": "Moved to Denver last year", "user_id": "alex", "created_at": "2024-03-01T10:00:00Z"},
        {"id": "m2", "memory": "Likes hiking in the Alps", "user_id": "alex", "created_at": "2024-03-01T10:00:00Z"},
    ]
    path = tmp_path / "mem0.json"
    path.write_text(json.dumps({"results": memories}))

    _import("mem0", path)

    assert _world("Moved to Denver last year") == WorldTime(start=date(2023, 1, 1), start_precision="year")
    assert not _world("Likes hiking in the Alps").known
