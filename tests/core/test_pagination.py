"""Cursor pagination refuses what it did not issue: any cursor decodes to one this list could have issued, or is a
400 naming `cursor`; any page size is within 1 to 500, or a 400 naming `page_size`. Hypothesis builds cursors the
way DRF encodes them (base64 of a query string of o, r and p) with any values, and arbitrary strings."""

from __future__ import annotations

import base64
from urllib.parse import urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from core.api.pagination import StrictCursorPagination
from tests.fuzzing import examples, tally_add

pytestmark = pytest.mark.fuzz

values = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.text(max_size=12),
    st.sampled_from(["", "1.5", "1e3", " 7", "0x10", "\x00", "٣"]),
)
drf_like = st.dictionaries(st.sampled_from(["o", "r", "p", "x"]), values, max_size=3).map(
    lambda tokens: base64.b64encode(urlencode(tokens).encode()).decode()
)
cursors = st.one_of(
    drf_like, st.text(max_size=40), st.binary(max_size=30).map(lambda raw: base64.b64encode(raw).decode())
)


def _request(**query: str) -> Request:
    return Request(APIRequestFactory().get("/api/v1/facts", query))


@given(cursor=cursors)
@settings(max_examples=examples(400))
def test_a_cursor_decodes_to_one_this_list_issues_or_is_a_400_naming_it(cursor):
    tally_add("validator inputs")
    pagination = StrictCursorPagination()
    try:
        decoded = pagination.decode_cursor(_request(cursor=cursor))
    except ValidationError as error:
        assert set(error.detail) == {"cursor"}
        return
    assert decoded.position is None or -(2**63) < int(decoded.position) < 2**63
    assert decoded.offset >= 0 and decoded.reverse in (True, False)


@given(page_size=st.one_of(st.integers(-10, 1000).map(str), st.text(max_size=6)))
@settings(max_examples=examples(200))
def test_a_page_size_is_served_exactly_or_refused_naming_it(page_size):
    tally_add("validator inputs")
    pagination = StrictCursorPagination()
    try:
        served = pagination.get_page_size(_request(page_size=page_size))
    except ValidationError as error:
        assert set(error.detail) == {"page_size"}
        return
    assert 1 <= served <= 500 and str(served) == page_size
