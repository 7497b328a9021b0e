"""Invalidate the cached always-in-context blocks whenever a blob or a reflection is written or deleted, whoever
writes it (consolidation, formation, the API, an operator in the admin). Connected in ReflectionsConfig.ready().

Invalidation runs after commit: before it, readers still see the old rows, so a block they cache then is the old
block under the old generation, which the bump retires."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from agents.models import Agent
from facts.signals import user_profile_changed
from reflections.models import ConsolidatedMemory, Reflection
from reflections.services.context_cache import context_cache_invalidate


@receiver(post_save, sender=Reflection, dispatch_uid="reflection_saved_invalidates_context")
@receiver(post_delete, sender=Reflection, dispatch_uid="reflection_deleted_invalidates_context")
@receiver(post_save, sender=ConsolidatedMemory, dispatch_uid="blob_saved_invalidates_context")
@receiver(post_delete, sender=ConsolidatedMemory, dispatch_uid="blob_deleted_invalidates_context")
def memory_scope_changed(sender: type, instance: Reflection | ConsolidatedMemory, **kwargs: Any) -> None:
    agent_id, user_id, session_id = instance.agent_id, instance.user_id, instance.session_id
    transaction.on_commit(
        lambda: context_cache_invalidate(agent_id=agent_id, user_id=user_id, session_id=session_id),
        using=kwargs.get("using"),
    )


@receiver(user_profile_changed, dispatch_uid="user_profile_changed_invalidates_context")
def user_profile_changed_invalidate(sender: object, agent_id: int, user_id: int, **kwargs: Any) -> None:
    """Sent after commit already: the block shows the user's profile."""
    context_cache_invalidate(agent_id=agent_id, user_id=user_id)


@receiver(post_save, sender=Agent, dispatch_uid="agent_saved_invalidates_context")
def agent_settings_changed(sender: type, instance: Agent, **kwargs: Any) -> None:
    """Switches such as profile_in_context change what every block of the agent shows."""
    agent_id = instance.pk
    transaction.on_commit(lambda: context_cache_invalidate(agent_id=agent_id), using=kwargs.get("using"))
