"""The profile panel on the console's user page (facts.selectors.profile): what memory holds of the user by category,
the entries that hold now and, below, those that ended, each with its world time and its source facts."""

from __future__ import annotations

from typing import Any

from agents.models import EndUser
from console.facts.timeline import world_time_text
from facts.selectors.profile import profile_sections


def profile_context(*, user: EndUser) -> dict[str, Any]:
    profile = profile_sections(agent=user.agent, user=user, include_history=True)
    rows = [
        {
            "name": section.name,
            "slug": section.category,
            "entries": [{"entry": entry, "world_time": world_time_text(entry.world_time)} for entry in section.entries],
            "history": [{"entry": entry, "world_time": world_time_text(entry.world_time)} for entry in section.history],
        }
        for section in profile.sections
    ]
    return {"profile_categories": rows, "profile_truncated": profile.truncated}
