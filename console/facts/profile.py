"""The profile panel on the console's user page (facts.selectors.profile): what memory holds of the user by category,
the entries that hold now and, below, those that ended, each with its world time and its source facts."""

from __future__ import annotations

from typing import Any

from agents.models import EndUser
from agents.selectors.categories import agent_categories
from console.facts.timeline import world_time_text
from facts.selectors.profile import profile_by_category


def profile_context(*, user: EndUser) -> dict[str, Any]:
    categories = agent_categories(agent=user.agent)
    profile = profile_by_category(
        agent=user.agent, user=user, categories=[category.slug for category in categories], include_history=True
    )
    rows = [
        {
            "name": category.name,
            "slug": category.slug,
            "entries": [
                {"entry": entry, "world_time": world_time_text(entry.world_time)}
                for entry in profile.current[category.slug]
            ],
            "history": [
                {"entry": entry, "world_time": world_time_text(entry.world_time)}
                for entry in profile.history[category.slug]
            ],
        }
        for category in categories
    ]
    return {
        "profile_categories": [row for row in rows if row["entries"] or row["history"]],
        "profile_truncated": profile.truncated,
    }
