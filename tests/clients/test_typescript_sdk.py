"""The TypeScript SDK (clients/typescript) in Node, against the live service: its types against the API's OpenAPI
schema, strict compilation, the Node tests (node --test) on a live server with the real Celery worker and the LLM
stub, and the npm tarball installed into a fresh project. A failure shows Node's own output."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command

from agents.services.api_keys import api_key_create
from tests.conftest import REPO_DIR
from tests.factories import AgentFactory
from tests.llm_stub_server import StubLLMServer

TS_DIR = REPO_DIR / "clients" / "typescript"
NODE_MAJOR_MIN = 20
# The options `npm run generate` passes openapi-typescript (package.json): the check regenerates exactly so.
OPENAPI_TYPESCRIPT_OPTIONS = ("--default-non-nullable=false",)
# The service's throttle while the retry tests run: a few requests exhaust a key's window, which ends in seconds.
THROTTLE_FOR_RETRY_TESTS = "3/2s"


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail(
            f"Node.js {NODE_MAJOR_MIN}+ is needed for the TypeScript SDK's tests: install it (apt-get install nodejs)"
        )
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < NODE_MAJOR_MIN:
        pytest.fail(f"Node.js {NODE_MAJOR_MIN}+ is needed for the TypeScript SDK's tests, found {version}")
    if not (TS_DIR / "node_modules" / ".bin" / "tsc").exists():
        pytest.fail("clients/typescript/node_modules is missing: run `make install` (npm ci from package-lock.json)")
    return node


def _run(command: list[str], *, cwd: Path = TS_DIR, env: dict[str, str] | None = None, timeout: float = 300) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        pytest.fail(f"`{' '.join(command)}` failed ({done.returncode}):\n{done.stdout}\n{done.stderr}", pytrace=False)
    return done.stdout


def _bin(name: str) -> str:
    return str(TS_DIR / "node_modules" / ".bin" / name)


def test_types_are_generated_from_the_services_current_schema(tmp_path):
    _node()
    schema = tmp_path / "openapi.yaml"
    call_command("spectacular", file=str(schema), validate=True)
    generated = tmp_path / "schema.ts"
    _run([_bin("openapi-typescript"), str(schema), *OPENAPI_TYPESCRIPT_OPTIONS, "-o", str(generated)])

    committed = (TS_DIR / "src" / "schema.ts").read_text()
    assert generated.read_text() == committed, (
        "clients/typescript/src/schema.ts is not the service's current API: run `npm run generate` in "
        "clients/typescript, then fix what no longer compiles"
    )


def test_the_tool_helpers_are_generated_from_the_services_tool_definitions(tmp_path):
    node = _node()
    definitions = io.StringIO()
    call_command("tool_definitions", stdout=definitions)
    generated = tmp_path / "tools.generated.ts"
    done = subprocess.run(
        [node, "scripts/generate-tools.mjs", str(generated)],
        cwd=TS_DIR,
        input=definitions.getvalue(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr

    assert generated.read_text() == (TS_DIR / "src" / "tools.generated.ts").read_text(), (
        "clients/typescript/src/tools.generated.ts is not the service's current tools: run `npm run generate` in "
        "clients/typescript"
    )


def _agent_key(name: str) -> str:
    agent = AgentFactory(external_id=f"{name}-{uuid.uuid4().hex[:6]}", name=name)
    return api_key_create(agent=agent, name="typescript sdk tests")[1]


@pytest.mark.django_db(transaction=True)
def test_the_sdk_in_node_against_the_live_service(live_server, celery_worker_process, settings):
    node = _node()
    # The package as users get it (dist/, which the examples import by name), then everything else strictly
    # type-checked and compiled with it: the sources, the Node tests and docs/integrations.md's examples.
    _run([node, "scripts/extract-examples.mjs"])
    _run([_bin("tsc"), "-p", "tsconfig.build.json"])
    _run([_bin("tsc"), "-p", "tsconfig.test.json"])

    settings.API_THROTTLE_RATE = ""  # the retry tests below set their own
    keys = {
        "MEMORY_API_KEY": _agent_key("ts-client"),
        "MEMORY_API_KEY_OTHER_AGENT": _agent_key("ts-other"),
        "MEMORY_API_KEY_AI": _agent_key("ts-ai"),
        "MEMORY_API_KEY_EXAMPLES": _agent_key("ts-examples"),
        "MEMORY_API_KEY_THROTTLED": _agent_key("ts-throttled"),
    }
    tests = TS_DIR / ".test-build" / "test"
    with StubLLMServer(uses_tools=True).running() as stub:
        env = os.environ | keys | {"MEMORY_URL": live_server.url, "LLM_STUB_BASE_URL": stub.base_url}
        node_test = [node, "--test", "--test-reporter=spec"]
        print(_run([*node_test, *(str(tests / f"{name}.test.js") for name in ("client", "ai", "examples"))], env=env))
        settings.API_THROTTLE_RATE = THROTTLE_FOR_RETRY_TESTS
        print(_run([*node_test, str(tests / "throttling.test.js")], env=env))

    assert any(request.body.get("tools") for request in stub.requests), "no model call offered the memory tools"


def test_the_npm_tarball_installs_and_imports_in_a_fresh_project(tmp_path):
    node = _node()
    npm = shutil.which("npm") or pytest.fail("npm is needed to pack the TypeScript SDK")
    packed = json.loads(_run([npm, "pack", "--json", "--pack-destination", str(tmp_path)]))[0]
    files = {entry["path"] for entry in packed["files"]}
    assert {"dist/index.js", "dist/index.d.ts", "dist/ai.js", "dist/ai.d.ts", "package.json", "README.md"} <= files
    assert not any(path.startswith(("test/", "node_modules/", ".test-build/")) for path in files)

    project = tmp_path / "app"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"name": "app", "private": True, "type": "module"}))
    _run([npm, "install", "--offline", "--no-audit", "--no-fund", str(tmp_path / packed["filename"])], cwd=project)
    # A user's strict TypeScript against the installed package's types, compiled and run by Node.
    (project / "app.ts").write_text(
        'import { MemoryAPIError, MemoryClient, type Fact } from "agent-memory-client";\n'
        'const client = new MemoryClient({ baseUrl: "http://127.0.0.1:1", apiKey: "k" });\n'
        "const facts: Fact[] = [];\n"
        "const error = new MemoryAPIError({ status: 400, code: 'invalid', message: 'm', fields: { top_k: ['x'] } });\n"
        "console.log(typeof client.search, error instanceof Error, Object.keys(error.fields), facts.length);\n"
    )
    strict = ["--strict", "--module", "nodenext", "--target", "es2022", "--lib", "es2022,dom"]
    _run([_bin("tsc"), *strict, "app.ts"], cwd=project)
    printed = _run([node, "app.js"], cwd=project)
    assert printed.strip() == "function true [ 'top_k' ] 0"


AI_7_PROJECT = TS_DIR / "test" / "ai-7"


@pytest.mark.django_db(transaction=True)
def test_the_vercel_ai_sdk_examples_run_beside_ai_7(live_server, tmp_path):
    """The SDK in an application on `ai` 7 (test/ai-7: its own lockfile): npm resolves the SDK's peer range without
    --force or --legacy-peer-deps, and docs/integrations.md's Vercel AI SDK examples compile strictly against ai 7's
    types and print what they say, against the live service and the LLM stub. Their run on ai 6, the SDK's own
    devDependency, is test_the_sdk_in_node_against_the_live_service's."""
    node = _node()
    npm = shutil.which("npm") or pytest.fail("npm is needed to install the SDK beside ai 7")
    _run([node, "scripts/extract-examples.mjs"])
    packed = json.loads(_run([npm, "pack", "--json", "--pack-destination", str(tmp_path)]))[0]
    project = tmp_path / "app"
    project.mkdir()
    for name in ("package.json", "package-lock.json"):
        shutil.copy(AI_7_PROJECT / name, project / name)
    quiet = ["--no-audit", "--no-fund", "--prefer-offline"]
    _run([npm, "ci", *quiet], cwd=project)
    _run([npm, "install", *quiet, str(tmp_path / packed["filename"])], cwd=project)
    assert json.loads((project / "node_modules" / "ai" / "package.json").read_text())["version"].startswith("7.")

    examples = [
        example
        for example in json.loads((TS_DIR / "docs-examples" / "examples.json").read_text())
        if example["section"] == "Vercel AI SDK"
    ]
    assert len(examples) == 2
    for example in examples:
        shutil.copy(TS_DIR / "docs-examples" / f"{example['name']}.ts", project)
    strict = ["--strict", "--noUncheckedIndexedAccess", "--exactOptionalPropertyTypes", "--skipLibCheck"]
    target = ["--module", "nodenext", "--target", "es2022", "--lib", "es2022,dom", "--types", "node"]
    _run([_bin("tsc"), *strict, *target, *(f"{example['name']}.ts" for example in examples)], cwd=project)
    with StubLLMServer(uses_tools=True).running() as stub:
        env = os.environ | {
            "MEMORY_URL": live_server.url,
            "MEMORY_API_KEY": _agent_key("ts-ai-7"),
            "LLM_BASE_URL": stub.base_url,
            "LLM_API_KEY": "stub",
            "LLM_MODEL": "stub-model",
        }
        for example in examples:
            printed = _run([node, f"{example['name']}.js"], cwd=project, env=env)
            assert example["prints"] in printed, (example["name"], printed)
