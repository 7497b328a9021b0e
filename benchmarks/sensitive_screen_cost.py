"""What the sensitive-data screen (core.safety.sensitive.sensitive_findings) costs per text, in CPU time, on the texts
it meets: LoCoMo turns of about 150 characters (what message search screens), 1,500 characters of turns, the lines
of the secrets corpus (every one names a secret), 20,000 and 100,000 characters of turns or of corpus lines, and
100,000-character messages made to be hard (a secret's name repeated, with and without spaces, codes and cards).

    .venv/bin/python -m benchmarks.sensitive_screen_cost                                   # this checkout
    .venv/bin/python -m benchmarks.sensitive_screen_cost --code-dir /tmp/before --code-dir .   # before and after

Each checkout runs in processes of its own (its code imported from its directory: any checkout, old or new, that has
core.safety.sensitive), given the same texts; the checkouts alternate pass by pass. A figure is the median over the
passes of the CPU microseconds per text (each pass repeats a case's texts for at least --seconds). A case a checkout
does not finish in --timeout seconds is reported as `"> N s"`. Reads LoCoMo from ../shared/benchmarks (--locomo).
Prints JSON; writes nothing."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.lib.locomo_data import DEFAULT_LOCOMO, SPLITS, load_conversations
from benchmarks.sensitive_corpus import corpus

REPO_DIR = Path(__file__).resolve().parent.parent

# Run in each checkout's directory: reads {"texts": [...], "seconds": s} on stdin, prints CPU microseconds per text.
WORKER = """
import json, sys, time
from core.safety.sensitive import sensitive_findings
job = json.load(sys.stdin)
texts = job["texts"]
sensitive_findings(texts[0])  # the rules are compiled once per process
started, screened = time.process_time(), 0
while True:
    for text in texts:
        sensitive_findings(text)
    screened += len(texts)
    if time.process_time() - started >= job["seconds"]:
        break
print((time.process_time() - started) / screened * 1e6)
"""


def _joined(parts: list[str], length: int) -> str:
    out, total, i = [], 0, 0
    while total < length:
        out.append(parts[i % len(parts)])
        total += len(out[-1]) + 1
        i += 1
    return " ".join(out)[:length]


def cases(locomo: Path) -> dict[str, list[str]]:
    turns = [turn.text for c in load_conversations(locomo, sample_ids=SPLITS["all"]) for turn in c.turns]
    lines = [line["text"] for line in corpus()]
    return {
        "locomo turn (120-180 characters)": [turn for turn in turns if 120 <= len(turn) <= 180][:300],
        "1,500 characters of turns": [_joined(turns[i * 12 :], 1500) for i in range(40)],
        "a line of the corpus": lines,
        "20,000 characters of turns": [_joined(turns, 20_000)],
        "20,000 characters of corpus lines": [_joined(lines, 20_000)],
        "100,000 characters of turns": [_joined(turns, 100_000)],
        "100,000 characters of corpus lines": [_joined(lines, 100_000)],
        "100,000 characters of 'my password '": [("my password " * 9000)[:100_000]],
        "100,000 characters of 'password=' (no space)": [("password=" * 12000)[:100_000]],
        "100,000 characters of 'my pin is '": [("my pin is " * 10000)[:100_000]],
        "100,000 characters of door codes and cards": [("door code 1234, card 4111 cvv " * 4000)[:100_000]],
    }


def _screened(code_dir: Path, texts: list[str], *, seconds: float, timeout: float) -> float | None:
    env = os.environ | {"PYTHONPATH": str(code_dir)}
    job = json.dumps({"texts": texts, "seconds": seconds})
    try:
        done = subprocess.run(
            [sys.executable, "-c", WORKER], input=job, capture_output=True, text=True, cwd=code_dir, env=env,
            timeout=timeout, check=True,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return None
    return float(done.stdout)


def _figure(runs: list[float | None], *, timeout: float) -> float | str:
    finished = [run for run in runs if run is not None]
    return round(statistics.median(finished), 1) if len(finished) == len(runs) else f"> {timeout:g} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code-dir", action="append", type=Path, help="a checkout to measure (repeatable)")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=0.5, help="at least this much CPU per case and pass")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--case", action="append", help="only the cases whose name contains this (repeatable)")
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    args = parser.parse_args(argv)
    code_dirs = [path.resolve() for path in args.code_dir or [REPO_DIR]]
    chosen = {
        name: texts
        for name, texts in cases(args.locomo).items()
        if not args.case or any(part in name for part in args.case)
    }
    figures: dict[str, dict[str, list[float | None]]] = {name: {str(d): [] for d in code_dirs} for name in chosen}
    for number in range(args.passes):
        order = code_dirs[number % len(code_dirs) :] + code_dirs[: number % len(code_dirs)]
        for name, texts in chosen.items():
            for code_dir in order:
                runs = figures[name][str(code_dir)]
                if runs and runs[-1] is None:
                    continue  # timed out once: not run again
                runs.append(_screened(code_dir, texts, seconds=args.seconds, timeout=args.timeout))
    result = {
        "load_average": os.getloadavg()[0],
        "microseconds_per_text": {
            name: {code_dir: _figure(runs, timeout=args.timeout) for code_dir, runs in by_dir.items()}
            for name, by_dir in figures.items()
        },
    }
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
