"""The service's WSGI application (Django with /mcp beside it, as gunicorn serves it) on a threaded WSGI server in
this process against the test database, and the MCP SDK's own client connected to it."""

from __future__ import annotations

import contextlib
import json
import os
import socketserver
import sys
import threading
import tomllib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest
from django.core.wsgi import get_wsgi_application
from django.db import connections
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from agents.models import Agent, EndUser
from agents.services.api_keys import api_key_create
from conversations.models import Message, Session
from conversations.services.message_embeddings import messages_embed_missing
from mcp_server.wsgi import ServiceApplication
from reflections.models import MemoryScope, Reflection
from tests.conftest import REPO_DIR
from tests.factories import AgentFactory, MessageFactory


@dataclass(frozen=True)
class Tenant:
    agent: Agent
    key: str


class _ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args) -> None:  # noqa: A002  (the standard library's name)
        pass


@pytest.fixture
def service_url() -> Iterator[str]:
    """The whole service (REST and /mcp) on a free port for one test (marked django_db(transaction=True)). Its
    threads close their database connections after each request, so that none outlives the test's flush."""
    database = connections.settings["default"]
    kept_for = database["CONN_MAX_AGE"]
    database["CONN_MAX_AGE"] = 0
    application = ServiceApplication(django_application=get_wsgi_application())
    server = make_server("127.0.0.1", 0, application, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler)
    thread = threading.Thread(target=server.serve_forever, name="wsgi-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join(30)
    application.close()
    database["CONN_MAX_AGE"] = kept_for


def tenant_create(external_id: str, **settings) -> Tenant:
    agent = AgentFactory(external_id=external_id, name=external_id, **settings)
    _, key = api_key_create(agent=agent, name="mcp tests")
    return Tenant(agent=agent, key=key)


@pytest.fixture
def tenant() -> Tenant:
    return tenant_create("agent-a")


@contextlib.asynccontextmanager
async def mcp_http(url: str, *, headers: dict[str, str], mode: str = "auto") -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP with these headers (the API key, a pinned user). `mode` "legacy": the
    initialize handshake of the 2025 revisions, as most clients still speak it."""
    http = create_mcp_http_client(headers=headers)
    async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as client:
        yield client


def conversation_store(*, agent: Agent, user: str, session: str, turns: list[tuple[str, str]]) -> list[Message]:
    """Turns (role, content) of one session, stored and indexed for message search as the embedding task would."""
    end_user, _ = EndUser.objects.get_or_create(agent=agent, external_id=user)
    stored_session, _ = Session.objects.get_or_create(agent=agent, user=end_user, external_id=session)
    messages = [MessageFactory(session=stored_session, role=role, content=text) for role, text in turns]
    messages_embed_missing(message_ids=[message.pk for message in messages])
    return messages


def reflection_store(*, agent: Agent, user: str, content: str) -> None:
    end_user, _ = EndUser.objects.get_or_create(agent=agent, external_id=user)
    Reflection.objects.create(agent=agent, user=end_user, scope=MemoryScope.USER, content=content)


def tool_json(result) -> dict:
    """A successful tool result's JSON: its text content, which is what every MCP client hands the model."""
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


def tool_error(result) -> str:
    assert result.is_error, result.content
    return result.content[0].text


CLIENT_DIR = REPO_DIR / "clients" / "python"


def console_script_entry_point(name: str) -> str:
    """The `module:function` the client package's pyproject.toml installs as a console script."""
    with (CLIENT_DIR / "pyproject.toml").open("rb") as pyproject:
        return tomllib.load(pyproject)["project"]["scripts"][name]


@pytest.fixture(scope="session")
def console_scripts_dir(tmp_path_factory) -> Path:
    """A folder holding `agent-memory-mcp` as pip writes a console script (this interpreter running the entry point
    that pyproject.toml declares), for the tests to put on PATH as a desktop client's environment has it."""
    folder = tmp_path_factory.mktemp("bin")
    module, _, function = console_script_entry_point("agent-memory-mcp").partition(":")
    script = folder / "agent-memory-mcp"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(CLIENT_DIR)!r})\n"
        f"from {module} import {function}\nsys.exit({function}())\n"
    )
    script.chmod(0o755)
    return folder


def stdio_server(*, command: str, env: dict[str, str], scripts_dir: Path) -> StdioServerParameters:
    """What a desktop client starts: `command` with `env`, on a PATH that has the console script."""
    path = f"{scripts_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    return StdioServerParameters(command=command, env=env | {"PATH": path})


@contextlib.asynccontextmanager
async def mcp_stdio(parameters: StdioServerParameters) -> AsyncIterator[Client]:
    async with Client(parameters) as client:
        yield client
