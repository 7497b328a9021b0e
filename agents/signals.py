"""Invalidate the per-process request path caches (core/runtime/request_path_cache.py) on every write to an agent
or an API key, whoever writes it (a service, an operator in the admin, an import), and on a change to an end user.
A new end user needs none: only found users are cached. An erasure deletes its user in
portability/services/erasure.py, which invalidates there (a delete receiver here would make every cascade fetch
its users to signal each). Connected in AgentsConfig.ready()."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from agents.models import Agent, AgentAPIKey, EndUser
from core.runtime.request_path_cache import request_path_caches_invalidate


@receiver(post_save, sender=Agent, dispatch_uid="agent_saved_invalidates_request_path")
@receiver(post_delete, sender=Agent, dispatch_uid="agent_deleted_invalidates_request_path")
@receiver(post_save, sender=AgentAPIKey, dispatch_uid="api_key_saved_invalidates_request_path")
@receiver(post_delete, sender=AgentAPIKey, dispatch_uid="api_key_deleted_invalidates_request_path")
def request_path_row_changed(sender: type, **kwargs: Any) -> None:
    request_path_caches_invalidate(using=kwargs.get("using"))


@receiver(post_save, sender=EndUser, dispatch_uid="end_user_changed_invalidates_request_path")
def end_user_changed(sender: type, created: bool, **kwargs: Any) -> None:
    if not created:
        request_path_caches_invalidate(using=kwargs.get("using"))
