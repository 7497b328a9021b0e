"""Past messages as they are read back under the agent's sensitive-data policy; the stored text is not touched."""

import pytest

from conversations.models import Message
from conversations.selectors.message_screening import (
    WITHHELD_MESSAGE,
    message_text_for_reading,
    messages_screen_for_reading,
)
from core.safety.sensitive import SensitiveDataPolicy
from tests.factories import MessageFactory

SAID = "We met at noon. The wifi password at my place is hunter2-blue. Bring snacks!"


@pytest.mark.django_db
def test_redact_replaces_the_value_and_keeps_the_rest(agent):
    agent.sensitive_data = SensitiveDataPolicy.REDACT

    shown = message_text_for_reading(agent=agent, text=SAID)

    assert shown == "We met at noon. The wifi password at my place is [redacted password or PIN]. Bring snacks!"


@pytest.mark.django_db
def test_withhold_drops_the_sentence_or_the_whole_text_when_nothing_else_is_left(agent):
    agent.sensitive_data = SensitiveDataPolicy.WITHHOLD

    assert message_text_for_reading(agent=agent, text=SAID) == "We met at noon. Bring snacks!"
    assert message_text_for_reading(agent=agent, text="my PIN is 4921") == WITHHELD_MESSAGE
    assert message_text_for_reading(agent=agent, text="Nothing secret here.") == "Nothing secret here."


@pytest.mark.django_db
def test_screening_for_reading_never_changes_the_stored_message(agent, session):
    stored = MessageFactory(session=session, content=SAID)
    loaded = list(Message.objects.filter(pk=stored.pk))

    messages_screen_for_reading(agent=agent, messages=loaded)

    assert "hunter2-blue" not in loaded[0].content
    assert Message.objects.get(pk=stored.pk).content == SAID


@pytest.mark.django_db
def test_the_caller_s_metadata_is_screened_too_and_its_shape_kept(agent, session):
    agent.sensitive_data = SensitiveDataPolicy.REDACT
    metadata = {"note": SAID, "tags": ["trip", "my PIN is 4921"], "turn": 3, "speaker": "Gene"}
    stored = MessageFactory(session=session, content="See the note.", metadata=metadata)
    loaded = list(Message.objects.filter(pk=stored.pk))

    messages_screen_for_reading(agent=agent, messages=loaded)

    assert loaded[0].metadata == {
        "note": "We met at noon. The wifi password at my place is [redacted password or PIN]. Bring snacks!",
        "tags": ["trip", "my PIN is [redacted password or PIN]"],
        "turn": 3,
        "speaker": "Gene",
    }
    assert Message.objects.get(pk=stored.pk).metadata == metadata
