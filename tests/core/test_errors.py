from rest_framework import serializers
from rest_framework.exceptions import NotFound

from core.api.errors import api_exception_handler
from core.exceptions import ApplicationError


class _MessageSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["user", "assistant"])
    content = serializers.CharField()


class _BatchSerializer(serializers.Serializer):
    messages = _MessageSerializer(many=True)


def test_validation_errors_name_each_field_by_its_path():
    serializer = _BatchSerializer(data={"messages": [{"role": "user", "content": "hi"}, {"role": "robot"}]})
    assert not serializer.is_valid()

    response = api_exception_handler(serializers.ValidationError(serializer.errors), {})

    assert response.status_code == 400
    error = response.data["error"]
    assert error["code"] == "invalid"
    assert set(error["fields"]) == {"messages.1.role", "messages.1.content"}
    assert "messages.1.role" in error["message"]


def test_application_and_http_errors_share_the_shape():
    conflict = api_exception_handler(ApplicationError("bad scope", fields={"scopes": ["invalid"]}), {})
    missing = api_exception_handler(NotFound(), {})

    assert conflict.status_code == 400
    assert conflict.data == {"error": {"code": "invalid", "message": "bad scope", "fields": {"scopes": ["invalid"]}}}
    assert missing.status_code == 404
    assert missing.data["error"]["code"] == "not_found" and missing.data["error"]["fields"] == {}


def test_unknown_api_path_is_json_404(client, db):
    response = client.get("/api/v1/no-such-endpoint/")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
