"""Signals facts send for the apps that depend on them (facts import none of those apps)."""

from django.dispatch import Signal

# Sent after commit when a user's profile (their facts with a key) changed: agent_id, user_id. The always-in-context
# block shows the profile, so reflections invalidates the user's cached blocks on it.
user_profile_changed = Signal()
