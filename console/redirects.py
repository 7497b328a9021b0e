"""Admin URLs of models that moved to another app keep working: /admin/<old app>/<model>/<rest> answers with a
permanent redirect to /admin/<new app>/<model>/<rest> (query string kept), so operators' bookmarks and links in
tickets survive a restructuring."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponsePermanentRedirect
from django.urls import URLPattern, re_path, reverse


@dataclass(frozen=True)
class MovedAdminModel:
    old_app_label: str
    new_app_label: str
    model_name: str


# Models that moved with their tables: the tenant's records to agents, formation's records to formation.
MOVED_MODELS = (
    MovedAdminModel(old_app_label="conversations", new_app_label="agents", model_name="agent"),
    MovedAdminModel(old_app_label="conversations", new_app_label="agents", model_name="agentapikey"),
    MovedAdminModel(old_app_label="conversations", new_app_label="agents", model_name="enduser"),
    MovedAdminModel(old_app_label="core", new_app_label="agents", model_name="erasurerecord"),
    MovedAdminModel(old_app_label="conversations", new_app_label="formation", model_name="formationjob"),
    MovedAdminModel(old_app_label="conversations", new_app_label="formation", model_name="heldmemory"),
    MovedAdminModel(old_app_label="conversations", new_app_label="formation", model_name="retentionrun"),
)


def _redirect_view(request: HttpRequest, *, moved: MovedAdminModel, rest: str) -> HttpResponsePermanentRedirect:
    url = reverse("admin:index") + f"{moved.new_app_label}/{moved.model_name}/{rest}"
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(f"{url}?{query}" if query else url)


def admin_moved_model_urls() -> list[URLPattern]:
    """Patterns to mount beside the admin's (relative to its prefix, before it: the admin would answer 404)."""
    return [
        re_path(
            rf"^{re.escape(moved.old_app_label)}/{re.escape(moved.model_name)}/(?P<rest>.*)$",
            _redirect_view,
            {"moved": moved},
        )
        for moved in MOVED_MODELS
    ]
