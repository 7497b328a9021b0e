"""Cursor pagination that refuses what it cannot serve, naming the parameter: a page size out of range (instead of
silently serving fewer rows) and a cursor it did not issue (instead of a 404, or a 500 when the cursor decodes to
a position that is not an id)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import Cursor, CursorPagination
from rest_framework.request import Request

# For the annotations only: imported while DRF reads its settings, rest_framework.views would be circular.
if TYPE_CHECKING:
    from rest_framework.views import APIView

# Every list is ordered by id, so a position is a bigint.
_POSITION = re.compile(r"^-?[0-9]{1,19}$")
_BIGINT_MAX = 2**63 - 1
_PAGE_SIZE = re.compile(r"^[0-9]{1,6}$")


class StrictCursorPagination(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request: Request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        # ASCII digits only: str.isdigit() also accepts "²", which int() refuses.
        if not _PAGE_SIZE.match(raw) or not 1 <= int(raw) <= self.max_page_size:
            raise ValidationError(
                {self.page_size_query_param: [f"must be a whole number from 1 to {self.max_page_size}"]}
            )
        return int(raw)

    def get_schema_operation_parameters(self, view: APIView) -> list[dict]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] |= {"minimum": 1, "maximum": self.max_page_size}
        return parameters

    def decode_cursor(self, request: Request) -> Cursor | None:
        invalid = ValidationError({self.cursor_query_param: ["not a cursor this list issued: use the `next` link."]})
        try:
            cursor = super().decode_cursor(request)
        except NotFound as error:
            raise invalid from error
        if cursor is None or cursor.position is None:
            return cursor
        if not _POSITION.match(str(cursor.position)) or abs(int(cursor.position)) > _BIGINT_MAX:
            raise invalid
        return cursor
