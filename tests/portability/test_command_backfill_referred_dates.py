"""backfill_referred_dates: facts and message vectors stored before time-aware search get the day their text names,
the same day they would have got when written."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command

from conversations.models import Message, MessageEmbedding
from conversations.services.ingestion import MessageInput, session_append_messages
from conversations.services.message_embeddings import messages_embed_missing
from facts.models import Fact
from facts.services.facts import fact_create

SAID_AT = datetime(2023, 5, 8, 12, 0, tzinfo=UTC)


@pytest.mark.django_db
def test_rows_written_before_get_the_day_they_would_have_got(agent, end_user):
    dated = fact_create(
        agent=agent, user=end_user, scopes=["user"], content="Gene adopted a puppy yesterday", valid_from=SAID_AT
    )
    undated = fact_create(agent=agent, user=end_user, scopes=["user"], content="Gene likes jazz")
    session = session_append_messages(
        agent=agent,
        user_external_id=end_user.external_id,
        session_external_id="s-backfill",
        messages=[
            MessageInput(role="user", content="We went hiking last Saturday", created_at=SAID_AT),
            MessageInput(role="user", content="The weather was lovely", created_at=SAID_AT),
        ],
    ).session
    messages_embed_missing(message_ids=list(Message.objects.filter(session=session).values_list("pk", flat=True)))
    expected = {
        "fact": Fact.objects.get(pk=dated.pk).refers_to,
        "message": MessageEmbedding.objects.get(message__content__startswith="We went").refers_to,
    }
    assert expected["fact"] is not None and expected["message"] is not None
    Fact.objects.update(refers_to=None)  # as an older release stored them
    MessageEmbedding.objects.update(refers_to=None)

    out = StringIO()
    call_command("backfill_referred_dates", "--batch-size", "1", stdout=out)

    assert Fact.objects.get(pk=dated.pk).refers_to == expected["fact"]
    assert Fact.objects.get(pk=undated.pk).refers_to is None
    assert MessageEmbedding.objects.get(message__content__startswith="We went").refers_to == expected["message"]
    assert MessageEmbedding.objects.get(message__content__startswith="The weather").refers_to is None
    assert "facts: 1 given" in out.getvalue() and "messages: 1 given" in out.getvalue()
