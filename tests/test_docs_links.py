"""The docs hold together as reference: every relative link in README.md and docs/**/*.md reaches a file that exists
and, when it names an anchor, a heading of that page (as GitHub renders the anchor); each page has one top-level title;
the user-facing pages speak of the product, not of the issues that built it (the benchmark history keeps those); and
docs/architecture.md stays a map (at most about 250 lines, no table cell over about 200 characters). Read from the
files: no server, no database."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PAGES = sorted([REPO / "README.md", *(REPO / "docs").rglob("*.md")])
# The dated runs keep the issue numbers they were measured for.
HISTORY = REPO / "docs" / "benchmarks" / "history.md"

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
INLINE_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
# [text](target) and ![alt](target); the target may carry a title ("...") after a space.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.I)
ISSUE_REFERENCE = re.compile(r"\bissues?\s+#?\d+", re.I)


def prose(text: str) -> str:
    """The page without its fenced code blocks (whose lines are not headings and whose brackets are not links)."""
    return FENCE.sub("", text)


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: its text lower-cased, inline markup and punctuation dropped (letters, digits,
    `_`, `-` and spaces kept), spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays, its target goes
    text = re.sub(r"<[^>]+>", "", text).lower()
    kept = "".join(char for char in text if char in "-_ " or unicodedata.category(char)[0] in "LN")
    return kept.replace(" ", "-")


def anchors_of(page: Path) -> set[str]:
    text = prose(page.read_text())
    anchors: set[str] = set(HTML_ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for _, heading in HEADING.findall(text):
        anchor = github_anchor(heading)
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def links_of(page: Path) -> list[str]:
    return LINK.findall(INLINE_CODE.sub("", prose(page.read_text())))


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in links_of(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors_of(linked):
            broken.append(f"{target}: {linked.name} has no heading '#{anchor}'")
    return broken


def test_the_pages_are_found():
    names = {page.relative_to(REPO).as_posix() for page in PAGES}
    assert {"README.md", "docs/index.md", "docs/architecture.md", "docs/decisions/index.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_every_relative_link_resolves(page):
    assert broken_links(page) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO).as_posix())
def test_each_page_has_one_title(page):
    titles = [heading for level, heading in HEADING.findall(prose(page.read_text())) if level == "#"]
    assert len(titles) == 1, titles


@pytest.mark.parametrize(
    "page", [page for page in PAGES if page != HISTORY], ids=lambda page: page.relative_to(REPO).as_posix()
)
def test_user_facing_pages_name_no_issue(page):
    lines = [line for line in page.read_text().splitlines() if ISSUE_REFERENCE.search(line)]
    assert lines == []


def test_the_architecture_page_is_a_map():
    text = (REPO / "docs" / "architecture.md").read_text()
    assert len(text.splitlines()) <= 260
    cells = [cell.strip() for line in text.splitlines() if line.startswith("|") for cell in line.strip("|").split("|")]
    assert max(len(cell) for cell in cells) <= 210


def test_every_decision_record_is_listed_with_a_date_and_a_status():
    decisions = REPO / "docs" / "decisions"
    index = (decisions / "index.md").read_text()
    for record in sorted(decisions.glob("[0-9][0-9][0-9][0-9]-*.md")):
        text = record.read_text()
        assert f"]({record.name})" in index, record.name
        assert re.search(r"^- Date: \d{4}-\d{2}-\d{2}$", text, re.M), record.name
        assert re.search(r"^- Status: (accepted|superseded by \[\d{4}\])", text, re.M), record.name
        for section in ("## Context", "## Decision", "## Consequences"):
            assert section in text, (record.name, section)


def test_the_checker_catches_a_broken_link_and_anchor(tmp_path):
    section = "## A section: `code` (and more)\n\n"
    (tmp_path / "other.md").write_text("# Other\n\n" + section + section)
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#a-section-code-and-more) [twice](other.md#a-section-code-and-more-1) [self](#page)\n"
        "[gone](missing.md) [no anchor](other.md#nowhere) `[code](missing.md)`\n\n```\n[in a block](missing.md)\n```\n"
    )
    assert broken_links(page) == ["missing.md: no such file", "other.md#nowhere: other.md has no heading '#nowhere'"]


def test_the_issue_rule_catches_a_reference():
    assert ISSUE_REFERENCE.search("as issue 12 made lean") and ISSUE_REFERENCE.search("(issues 12 and 13)")
    assert ISSUE_REFERENCE.search("Issue #27 changed") and not ISSUE_REFERENCE.search("graphiti #779")
