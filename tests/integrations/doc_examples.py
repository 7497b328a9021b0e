"""Helpers of the integration tests: the code blocks of docs/integrations.md, run as a user would run them."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import REPO_DIR
from tests.memory_client_support import CLIENT_DIR

DOC = REPO_DIR / "docs" / "integrations.md"


def doc_code_blocks(section: str) -> list[str]:
    """The ```python blocks of the doc's `## <section>`, in order."""
    text = DOC.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, flags=re.MULTILINE | re.DOTALL)
    assert match, f"docs/integrations.md has no section '## {section}'"
    return re.findall(r"^```python\n(.*?)^```", match.group(1), flags=re.MULTILINE | re.DOTALL)


def run_doc_code(code: str, *, base_url: str, api_key: str, tmp_path) -> str:
    """Run a doc block in a fresh Python process, with the client package installed as the doc says (on the path)
    and the environment the doc's examples read; returns its standard output, failing the test on an error."""
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    env = os.environ | {"MEMORY_URL": base_url, "MEMORY_API_KEY": api_key, "PYTHONPATH": CLIENT_DIR}
    done = subprocess.run(
        [sys.executable, str(script)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"the doc's example failed:\n{done.stderr[-3000:]}"
    return done.stdout
