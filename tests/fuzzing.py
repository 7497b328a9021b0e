"""How much the property tests and the schemathesis runs try: a bounded, derandomised amount inside `make test` (the
same examples every run, a few seconds each), FUZZ_SCALE times more with fresh randomness under `make fuzz`
(MEMORY_FUZZ=1). Each run adds what it tried to a tally that `make fuzz` prints and docs/security.md quotes."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

FUZZING = os.environ.get("MEMORY_FUZZ") == "1"
FUZZ_SCALE = int(os.environ.get("MEMORY_FUZZ_SCALE", "40"))
# Where `make fuzz` collects the tally (cases tried, server errors found), one JSON object per test process.
TALLY_PATH = os.environ.get("MEMORY_FUZZ_TALLY")

hypothesis_settings.register_profile(
    "suite", derandomize=True, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.register_profile(
    "fuzz", derandomize=False, database=None, deadline=None, suppress_health_check=list(HealthCheck)
)
hypothesis_settings.load_profile("fuzz" if FUZZING else "suite")

SERVER_ERRORS = "server errors (5xx)"
tally: Counter = Counter()


def examples(count: int) -> int:
    """`count` examples in the suite, FUZZ_SCALE times as many under `make fuzz`."""
    return count * FUZZ_SCALE if FUZZING else count


def tally_add(name: str, amount: int = 1) -> None:
    tally[name] += amount


def tally_write() -> None:
    if TALLY_PATH and tally:
        with Path(TALLY_PATH).open("a") as output:
            output.write(json.dumps(dict(tally)) + "\n")


def tally_read(path: str) -> Counter:
    total: Counter = Counter()
    if Path(path).exists():
        for line in Path(path).read_text().splitlines():
            total.update(json.loads(line))
    return total


def main() -> None:
    """`python -m tests.fuzzing <tally file>`: what a `make fuzz` run tried, for docs/security.md."""
    total = tally_read(sys.argv[1])
    server_errors = total.pop(SERVER_ERRORS, 0)
    print(f"fuzzing campaign: {sum(total.values())} cases tried")
    for name, count in sorted(total.items()):
        print(f"  {name}: {count}")
    print(f"server errors (5xx) found: {server_errors}")


if __name__ == "__main__":
    main()
