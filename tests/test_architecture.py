"""The import rules of docs/architecture.md ("Parts and the imports they may make"), read from the source: core knows
no domain app, facts knows nothing of reflections, nothing in the product imports the benchmarks, modules import each
other without circles, and an import inside a function says why in a comment."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PRODUCT = ("core", "conversations", "facts", "reflections", "portability", "mcp_server", "memory_project")
DOMAIN = ("conversations", "facts", "reflections", "portability")
# The MCP server is part of the API layer: it may import every app, and only the wiring (memory_project) imports it.
FORBIDDEN = {
    "core": DOMAIN + ("mcp_server", "benchmarks"),
    "facts": ("reflections", "portability", "mcp_server", "benchmarks"),
    "conversations": ("portability", "mcp_server", "benchmarks"),
    "reflections": ("portability", "mcp_server", "benchmarks"),
    "portability": ("mcp_server", "benchmarks"),
    "mcp_server": ("benchmarks",),
    "memory_project": ("benchmarks",),
}
# The admin is the operator's view of every part: an app's admin may also use the parts above its app.
ADMIN_MAY_ALSO_IMPORT = {"conversations": ("portability",), "facts": ("portability",), "reflections": ("portability",)}


def _modules() -> dict[str, Path]:
    modules = {}
    for app in PRODUCT:
        for path in (REPO / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            relative = path.relative_to(REPO).with_suffix("")
            parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
            modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _imported(node: ast.Import | ast.ImportFrom, module: str) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    source = node.module or ""
    if node.level:  # relative (the settings modules): resolved against the importing module's package
        package = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        source = ".".join([*package, *([node.module] if node.module else [])])
    return [source, *(f"{source}.{alias.name}" for alias in node.names)]  # `from app.pkg import module` too


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found = []
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If | ast.Try) and not (isinstance(node, ast.If) and _is_type_checking(node)):
            found += [child for child in ast.walk(node) if isinstance(child, ast.Import | ast.ImportFrom)]
    return found


def _function_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += [child for child in ast.walk(node) if isinstance(child, ast.Import | ast.ImportFrom)]
    return found


def _all_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


TREES = {module: ast.parse(path.read_text(), filename=str(path)) for module, path in MODULES.items()}


@pytest.mark.parametrize("app", sorted(FORBIDDEN))
def test_each_part_imports_only_what_the_architecture_allows(app):
    breaches = []
    for module, tree in TREES.items():
        if module.split(".")[0] != app:
            continue
        for node in _all_imports(tree):
            in_admin = module.split(".")[1:2] == ["admin"]
            for name in _imported(node, module):
                top = name.split(".")[0]
                if top in FORBIDDEN[app] and not (in_admin and top in ADMIN_MAY_ALSO_IMPORT.get(app, ())):
                    breaches.append(f"{MODULES[module].relative_to(REPO)}:{node.lineno} imports {name}")
    assert breaches == [], "\n".join(sorted(set(breaches)))


def _comment_says_why(lines: list[str], lineno: int) -> bool:
    """A comment on the import's line, or on the line above the block of imports it belongs to."""
    if "#" in lines[lineno - 1]:
        return True
    above = lineno - 2
    while above >= 0 and lines[above].strip().startswith(("import ", "from ")):
        above -= 1
    return above >= 0 and lines[above].strip().startswith("#")


def test_an_import_inside_a_function_says_why():
    lines_of = {module: path.read_text().splitlines() for module, path in MODULES.items()}
    unexplained = []
    for module, tree in TREES.items():
        for node in _function_imports(tree):
            if not _comment_says_why(lines_of[module], node.lineno):
                unexplained.append(f"{MODULES[module].relative_to(REPO)}:{node.lineno}")
    assert unexplained == [], "imports inside functions without a comment saying why:\n" + "\n".join(unexplained)


def _import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module, tree in TREES.items():
        for node in _top_level_imports(tree):
            for name in _imported(node, module):
                if name in MODULES and name != module:
                    graph[module].add(name)
    return graph


def test_modules_import_each_other_without_circles():
    graph = _import_graph()
    state: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for imported in sorted(graph[module]):
            if state.get(imported) == 1:
                circles.append([*path[path.index(imported) :], imported])
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == [], "\n".join(" -> ".join(circle) for circle in circles)
