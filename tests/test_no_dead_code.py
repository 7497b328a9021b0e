"""No dead code: every module-level function, class and constant of the product is referenced by the product, not
only by its own definition, and not only by tests (what only tests need is a test helper, and lives in tests/). A
reference is a name in Python code (comments and docstrings are not references), a word in a string (a task's name, a
dotted path in the settings) or in a template or configuration file; the benchmarks count, being the product's own
measurements; the docs do not.

The devstack (the embedded stack behind `make run` and `make test`) is tooling, not the product: what it holds for
the tests (the replica server of the replica test) is not checked. What the framework finds without its name is not
counted: app configs and the API schema's extensions (found by subclassing), signal receivers and Celery tasks (found
by their decorators), management commands, migrations and the settings. Methods are not checked: most are the
framework's hooks (a view's `post`, an admin's `has_add_permission`).
The rule is checked on made-up modules too, so that a breach is seen to fail it."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PRODUCT = ("core", "agents", "webhooks", "conversations", "facts", "reflections", "formation", "portability", "api",
           "console", "mcp_server", "memory_project")  # fmt: skip
# Read for references besides the product's Python: the benchmarks, the devstack, templates and the files that
# configure and deploy.
ALSO_READ = ("benchmarks", "devstack", "templates", "deploy", ".ci", "Makefile", "Dockerfile", "gunicorn.conf.py",
             "manage.py", "docker-compose.yml", "pyproject.toml", ".env.example")  # fmt: skip
NOT_READ = ("node_modules", "__pycache__", "results", "fixtures")
# Decorators and base classes through which the framework finds a definition.
FOUND_BY_DECORATOR = {"receiver", "shared_task", "task"}
FOUND_BY_BASE = re.compile(r"(AppConfig|Extension|BaseCommand|Migration)$")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _name(node: ast.expr) -> str:
    while isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _docstrings(tree: ast.Module) -> set[int]:
    nodes = (node for node in ast.walk(tree) if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef))
    return {
        id(node.body[0].value)
        for node in nodes
        if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }


def references_in(path: str, text: str) -> Counter:
    """The words of a file that can refer to a definition: in Python, the names read (not those assigned or defined),
    attributes, imported names and the words of strings that are not docstrings; elsewhere, every word."""
    if not path.endswith(".py"):
        return Counter(WORD.findall(text))
    tree = ast.parse(text)
    docstrings = _docstrings(tree)
    words: Counter = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            words[node.id] += 1
        elif isinstance(node, ast.Attribute):
            words[node.attr] += 1
        elif isinstance(node, ast.alias):
            words[node.name.split(".")[-1]] += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words.update(WORD.findall(node.value))
    return words


def definitions_in(path: str, text: str) -> list[tuple[str, int, str]]:
    """(name, line, kind) of the module-level functions, classes and constants the framework does not find itself."""
    found = []
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if not {_name(decorator) for decorator in node.decorator_list} & FOUND_BY_DECORATOR:
                found.append((node.name, node.lineno, "function"))
        elif isinstance(node, ast.ClassDef):
            if not any(FOUND_BY_BASE.search(_name(base)) for base in node.bases):
                found.append((node.name, node.lineno, "class"))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [
                (target.id, node.lineno, "constant")
                for target in targets
                if isinstance(target, ast.Name) and target.id.lstrip("_").isupper()
            ]
    return found


def dead_code(product: dict[str, str], tests: dict[str, str]) -> list[str]:
    """Each definition of the product's Python files (path -> text) referenced nowhere else in `product` (which also
    holds the other files read for references), or only in `tests`."""
    defined = {
        path: definitions_in(path, text)
        for path, text in product.items()
        if path.endswith(".py")
        and path.split("/")[0] in PRODUCT
        and "/migrations/" not in path
        and "/management/commands/" not in path
        and not path.startswith(("memory_project/settings/", "memory_project/devstack"))
    }
    in_product, in_tests = Counter(), Counter()
    for path, text in product.items():
        in_product.update(references_in(path, text))
    for path, text in tests.items():
        in_tests.update(references_in(path, text))
    dead = []
    for path, found in sorted(defined.items()):
        for name, line, kind in found:
            if not in_product[name]:
                where = "only in tests" if in_tests[name] else "nowhere"
                dead.append(f"{path}:{line} {kind} {name} is referenced {where}")
    return dead


def _files(*roots: str) -> dict[str, str]:
    files = {}
    for root in roots:
        start = REPO / root
        paths = [start] if start.is_file() else sorted(start.rglob("*")) if start.is_dir() else []
        for path in paths:
            relative = path.relative_to(REPO)
            if path.is_file() and not set(relative.parts) & set(NOT_READ) and path.suffix not in {".png", ".onnx"}:
                try:
                    files[relative.as_posix()] = path.read_text()
                except UnicodeDecodeError:
                    continue
    return files


def test_every_definition_of_the_product_is_referenced_by_the_product():
    assert dead_code(_files(*PRODUCT, *ALSO_READ), _files("tests")) == []


def test_made_up_dead_code_is_found():
    product = {
        "facts/services/made_up.py": (
            '"""used_nowhere and only_tested are dead; kept_alive is not."""\n'
            "TIMEOUT = 5\n"
            "def used_nowhere():\n    pass\n"
            "def only_tested():\n    pass\n"
            "def kept_alive():\n    return TIMEOUT\n"
            "@shared_task\ndef found_by_its_decorator():\n    pass\n"
            "class FactsConfig(AppConfig):\n    pass\n"
        ),
        "api/facts/views.py": "from facts.services.made_up import kept_alive\n# used_nowhere, in a comment\n",
        "templates/page.html": "{{ KEPT }}",
    }
    tests = {"tests/facts/test_made_up.py": "from facts.services.made_up import only_tested\n"}

    assert dead_code(product, tests) == [
        "facts/services/made_up.py:3 function used_nowhere is referenced nowhere",
        "facts/services/made_up.py:5 function only_tested is referenced only in tests",
    ]
