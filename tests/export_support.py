"""What the tests of the native export share (tests/portability/test_command_export_memories.py and the upgrade test,
tests/test_upgrade_from_previous_release.py): an export's rows, and the export as a value that compares equal for
the same memory stored in other rows."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

from django.core.management import call_command

# Row fields that hold ids of other exported rows, and the kind of row they point to.
REFERENCES = {
    "user_id": "user",
    "session_id": "session",
    "source_session_id": "session",
    "superseded_by_id": "fact",
    "memory_id": "blob",
    "consolidated_into_id": "blob",
    "formed_through_message_id": "message",
    "summarized_through_message_id": "message",
    "subject_id": "entity",
    "object_entity_id": "entity",
    "merged_into_id": "entity",
}
# The kind of row each many-to-many link points to.
LINKS = {"source_facts": "fact"}


def export_rows(agent: str, path: Path, *options: str) -> list[dict]:
    """`export_memories` of the agent (its external id) into `path`, and the rows written."""
    call_command("export_memories", "--agent", agent, "--output", str(path), *options, stderr=StringIO())
    return [json.loads(line) for line in path.read_text().splitlines()]


def export_normalised(rows: list[dict]) -> dict:
    """The export with database ids replaced by each row's place among the rows of its kind (and lineages by their
    order of appearance), so exports of the same memory from different rows compare equal."""
    header, rows = rows[0], rows[1:]
    positions = {}
    for row in rows:
        kind_rows = positions.setdefault(row["kind"], {})
        kind_rows[row["id"]] = len(kind_rows)
    lineages: dict[str, int] = {}
    normalised = []
    for row in rows:
        fields = dict(row["fields"])
        for name, kind in REFERENCES.items():
            if fields.get(name) is not None:
                fields[name] = positions[kind][fields[name]]
        if "lineage" in fields:
            fields["lineage"] = lineages.setdefault(fields["lineage"], len(lineages))
        m2m = {
            name: [positions[LINKS.get(name, "message")][i] for i in ids] for name, ids in row.get("m2m", {}).items()
        }
        normalised.append((row["kind"], json.dumps(fields, sort_keys=True), json.dumps(m2m, sort_keys=True)))
    return {"agent settings": header["agent"]["settings"], "rows": normalised}
