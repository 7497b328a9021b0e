"""The admin URLs operators know from before the tenant moved to agents/ (issue 22) redirect to the new ones, with the
rest of the path and the query string; the admin's own URLs are not shadowed."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("/admin/conversations/agent/", "/admin/agents/agent/"),
        ("/admin/conversations/agent/formation/", "/admin/agents/agent/formation/"),
        ("/admin/conversations/agentapikey/add/", "/admin/agents/agentapikey/add/"),
        ("/admin/conversations/enduser/?agent__id__exact=3", "/admin/agents/enduser/?agent__id__exact=3"),
        ("/admin/core/erasurerecord/", "/admin/agents/erasurerecord/"),
    ],
)
def test_a_moved_model_s_old_admin_url_redirects_permanently(admin_client, old, new):
    response = admin_client.get(old)

    assert response.status_code == 301 and response["Location"] == new
    assert admin_client.get(new).status_code == 200


def test_an_old_change_page_url_lands_on_the_same_row(admin_client, agent, end_user):
    response = admin_client.get(f"/admin/conversations/enduser/{end_user.pk}/change/", follow=True)

    assert response.redirect_chain == [(f"/admin/agents/enduser/{end_user.pk}/change/", 301)]
    assert response.status_code == 200 and end_user.external_id in response.content.decode()


def test_models_that_stayed_keep_their_admin_urls(admin_client, session):
    assert admin_client.get("/admin/conversations/session/").status_code == 200
    assert reverse("admin:conversations_session_changelist") == "/admin/conversations/session/"
