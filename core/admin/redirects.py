"""Admin URLs of models that moved to another app keep working: /admin/<old app>/<model>/<rest> answers with a
permanent redirect to /admin/<new app>/<model>/<rest> (query string kept), so operators' bookmarks and links in
tickets survive a restructuring. Apps register their moved models in ready(); core names none of them."""

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


_MOVED: dict[tuple[str, str], MovedAdminModel] = {}


def admin_moved_model_register(*, old_app_label: str, new_app_label: str, model_name: str) -> None:
    moved = MovedAdminModel(old_app_label=old_app_label, new_app_label=new_app_label, model_name=model_name.lower())
    _MOVED[(moved.old_app_label, moved.model_name)] = moved


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
        for moved in _MOVED.values()
    ]
