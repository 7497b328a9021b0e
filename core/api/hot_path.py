"""Validation and rendering for the hot endpoints (searches) without DRF's per-request cost: a serializer builds its
fields anew for each request it is made for (copies of every declared field, a ModelSerializer's from the model's
metadata). One instance per serializer class, built once per process, gives the same validated data, the same
ValidationError (with the fields named) and the same output at a fraction of the cost; it is safe because a
serializer's fields keep no state between calls when nothing binds an instance or reads `initial_data` (the search
serializers do neither). tests/core/test_hot_path.py compares both ways."""

from __future__ import annotations

from functools import cache

from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail
from rest_framework.settings import api_settings


@cache
def _shared_instance(serializer_class: type[serializers.Serializer]) -> serializers.Serializer:
    return serializer_class()


def input_validate(*, serializer_class: type[serializers.Serializer], data: object) -> dict:
    """serializer_class(data=data).validated_data, or its ValidationError."""
    try:
        return dict(_shared_instance(serializer_class).run_validation(data))
    except serializers.ValidationError as error:
        detail = error.detail
        if isinstance(detail, list) and len(detail) == 1 and getattr(detail[0], "code", None) == "null":
            # What Serializer.errors says for a body of JSON null.
            detail = {api_settings.NON_FIELD_ERRORS_KEY: [ErrorDetail("No data provided", code="null")]}
        raise serializers.ValidationError(detail) from None


def output_represent(*, serializer_class: type[serializers.Serializer], instances: list) -> list[dict]:
    """[serializer_class(instance).data for instance in instances]."""
    serializer = _shared_instance(serializer_class)
    return [serializer.to_representation(instance) for instance in instances]
