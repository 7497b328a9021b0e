"""benchmarks/results/ and the pages that name its files: every file the manifest of benchmarks/report.py names is
there, every file there is named (the gitignored *_quick.json of `make bench` aside), each is named by the page it
backs, and docs/benchmarks/index.md is what `python -m benchmarks.report` writes from them now."""

from benchmarks import report

HISTORY_PAGE = report.REPO_DIR / "docs" / "benchmarks" / "history.md"


def _result_files() -> set[str]:
    return {path.name for path in report.RESULTS.iterdir() if not path.name.endswith("_quick.json")}


def test_every_file_the_manifest_names_is_in_the_results_folder():
    assert sorted(set(report.MANIFEST) - _result_files()) == []


def test_every_file_in_the_results_folder_is_in_the_manifest():
    assert sorted(_result_files() - set(report.MANIFEST)) == []


def test_a_file_backs_the_current_page_or_the_history():
    assert set(report.CURRENT) & set(report.HISTORY) == set()


def test_each_file_is_named_by_the_page_it_backs():
    current, history = report.PAGE.read_text(), HISTORY_PAGE.read_text()

    assert [name for name in report.CURRENT if f"`{name}`" not in current] == []
    assert [name for name in report.HISTORY if name not in history] == []


def test_the_committed_page_is_what_the_result_files_give_now():
    assert report.PAGE.read_text() == report.current_page(), "run: python -m benchmarks.report"
