"""Who speaks as a user: the speaker names (message metadata `speaker` or `name`, as
conversations.services.message_embeddings.speaker_name reads them) on the messages a user sent."""

from __future__ import annotations

from django.db.models import TextField, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, NullIf

from agents.models import EndUser
from conversations.models import Message


def user_speaker_names(*, user: EndUser, limit: int = 2) -> list[str]:
    """Up to `limit` distinct speaker names on the user's own messages (role user; the assistant's never count)."""
    speaker = Coalesce(
        NullIf(KT("metadata__speaker"), Value("", output_field=TextField())),
        NullIf(KT("metadata__name"), Value("", output_field=TextField())),
    )
    return list(
        Message.objects.filter(session__user=user, role=Message.Role.USER)
        .annotate(speaker=speaker)
        .filter(speaker__isnull=False)
        .order_by()
        .values_list("speaker", flat=True)
        .distinct()[:limit]
    )
