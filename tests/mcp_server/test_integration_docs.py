"""docs/integrations.md cannot rot: each block marked `<!-- doc-test: NAME -->` is read from the file and run against
the live stack, with the placeholders (the service URL, `mem_your_agent_key`) replaced by the test's own. JSON
configurations of desktop clients are started as those clients start them (stdio: the command with its env; HTTP: the
URL with its headers) and driven by the mcp SDK's client; Python examples are executed as they are written, the
OpenAI Agents SDK ones with the local LLM stub as their model."""

from __future__ import annotations

import json
import os
import re
import runpy
import subprocess
import sys

import anyio
import pytest

from agents.models import EndUser
from facts.models import FactScope, FactWriter
from facts.services.curation import fact_get_or_create
from tests.conftest import REPO_DIR
from tests.llm_stub_server import StubLLMServer, StubReply
from tests.mcp_server.conftest import mcp_http, mcp_stdio, stdio_server, tool_json

pytestmark = pytest.mark.django_db(transaction=True)

DOC = REPO_DIR / "docs" / "integrations.md"
PLACEHOLDER_URL = "http://127.0.0.1:8000"
PLACEHOLDER_KEY = "mem_your_agent_key"
BIRTHDAY = "Gene's birthday is March 15th."


def doc_blocks() -> dict[str, tuple[str, str]]:
    """The marked blocks of the doc: name -> (language, code)."""
    pattern = re.compile(r"<!-- doc-test: (?P<name>[\w-]+) -->\s*```(?P<language>\w+)\n(?P<code>.*?)```", re.DOTALL)
    return {match["name"]: (match["language"], match["code"]) for match in pattern.finditer(DOC.read_text())}


BLOCKS = doc_blocks()
CONFIGS = [name for name, (language, _) in BLOCKS.items() if language == "json"]


def test_the_doc_has_every_set_up_the_issue_asks_for():
    assert {
        "claude-desktop-stdio",
        "cursor-http",
        "cursor-stdio",
        "vscode-http",
        "vscode-stdio",
        "plain-mcp-python",
        "openai-agents-http",
        "openai-agents-stdio",
    } <= set(BLOCKS)


def _remember_birthday(tenant) -> None:
    gene, _ = EndUser.objects.get_or_create(agent=tenant.agent, external_id="gene")
    fact_get_or_create(
        agent=tenant.agent,
        user=gene,
        scopes=[FactScope.USER],
        content=BIRTHDAY,
        tags=[],
        source_session=None,
        change_reason="test",
        key="",
        written_by=FactWriter.ASSISTANT,
    )


def _filled(text: str, *, service_url: str, key: str) -> str:
    return text.replace(PLACEHOLDER_URL, service_url).replace(PLACEHOLDER_KEY, key)


@pytest.mark.parametrize("name", CONFIGS)
def test_each_client_configuration_connects_and_finds_the_memory(name, service_url, tenant, console_scripts_dir):
    _remember_birthday(tenant)
    config = json.loads(_filled(BLOCKS[name][1], service_url=service_url, key=tenant.key))
    (server,) = (config.get("mcpServers") or config["servers"]).values()

    async def main():
        if "url" in server:
            assert server.get("type", "http") == "http"
            connection = mcp_http(server["url"].removesuffix("/mcp"), headers=server["headers"])
        else:
            assert server.get("type", "stdio") == "stdio"
            connection = mcp_stdio(
                stdio_server(command=server["command"], env=server["env"], scripts_dir=console_scripts_dir)
            )
        async with connection as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            found = tool_json(await client.call_tool("search_memory", {"query": "When is Gene's birthday?"}))
            context = await client.read_resource("memory://context")
        return tools, found, context

    tools, found, context = anyio.run(main)

    assert {"search_memory", "save_memory", "search_conversations", "get_memory_context"} <= tools
    assert found["memories"][0]["content"] == BIRTHDAY
    assert context.contents[0].uri == "memory://context"


@pytest.fixture
def doc_environment(service_url, tenant, monkeypatch, console_scripts_dir):
    monkeypatch.setenv("MEMORY_URL", service_url)
    monkeypatch.setenv("MEMORY_API_KEY", tenant.key)
    monkeypatch.setenv("PATH", f"{console_scripts_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return tenant


def _run_block(name: str, tmp_path) -> None:
    script = tmp_path / f"{name}.py"
    script.write_text(BLOCKS[name][1])
    runpy.run_path(str(script), run_name="__main__")


NOT_FOR_THE_USER_S_SCRIPT = ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")


def _run_block_as_a_user_would(name: str, tmp_path) -> str:
    """The block as a script in a folder of its own, in a new interpreter: the OpenAI Agents SDK is the top-level
    package `agents`, which this repository's agents app would shadow in the test's own process (as it would not in
    the user's project). Returns what it printed."""
    script = tmp_path / f"{name}.py"
    script.write_text(BLOCKS[name][1])
    environment = {
        key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "DJANGO_SETTINGS_MODULE")
    }
    finished = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=120
    )
    assert finished.returncode == 0, finished.stderr
    return finished.stdout


def test_the_plain_mcp_example_runs(doc_environment, tmp_path, capsys):
    _run_block("plain-mcp-python", tmp_path)

    printed = capsys.readouterr().out.splitlines()
    assert "search_memory" in printed[0] and "get_memory_bundle" in printed[0]
    assert printed[1] == BIRTHDAY


@pytest.mark.parametrize("name", ["openai-agents-http", "openai-agents-stdio"])
def test_an_openai_agents_sdk_agent_gets_the_stored_fact_back_through_mcp(
    name, doc_environment, tmp_path, capsys, monkeypatch
):
    """The model is the local LLM stub: its first answer is a search_memory tool call, its second what the tool
    returned. Everything between (the SDK's MCP client, the transport, the service) is real."""
    _remember_birthday(doc_environment)
    stub = StubLLMServer()
    stub.then(
        StubReply(
            tool_calls=[
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "search_memory", "arguments": json.dumps({"query": "Gene's birthday"})},
                }
            ]
        )
    )
    with stub.running():
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "stub")
        monkeypatch.setenv("OPENAI_MODEL", "stub-model")
        final_output = _run_block_as_a_user_would(name, tmp_path)

    assert BIRTHDAY in final_output
    first, second = stub.requests[:2]
    offered = {tool["function"]["name"] for tool in first.body["tools"]}
    assert {"search_memory", "save_memory", "get_memory_bundle"} <= offered
    tool_message = second.body["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_1"
    assert BIRTHDAY in json.dumps(tool_message["content"])
