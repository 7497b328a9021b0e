"""CPU the offline provider (formation/offline/provider.py) spends forming one session: its fact extraction and
reflection calls on each LoCoMo session of a split, in this process, without the service around it (formation's own
overhead is benchmarks/ingestion_formation.py's, with an instant LLM).

    .venv/bin/python -m benchmarks.offline_formation_cpu                    # the current extractor, dev split
    .venv/bin/python -m benchmarks.offline_formation_cpu --module old.py    # another version of offline.py

Per session: process CPU time of the two calls, the turns given as formation gives them ("<speaker>: <text>", the
session's date). The first call's one-time cost (loading spaCy's model) is reported apart. Prints the figures."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

from benchmarks.lib.locomo_data import DEFAULT_LOCOMO, SPLITS, load_conversations


def _provider(module: Path | None):
    if module is None:
        from formation.offline.provider import OfflineLLM

        return OfflineLLM()
    spec = importlib.util.spec_from_file_location("offline_under_test", module)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded  # dataclasses look their module up there
    spec.loader.exec_module(loaded)
    return loaded.OfflineLLM()


def _form(provider, messages: list[dict]) -> None:
    from core.llm.base import LLMRequest

    inputs = {"messages": messages, "max_words": 30, "memory_text": ""}
    for purpose in ("extract_facts", "reflect"):
        provider.complete(LLMRequest(purpose=purpose, messages=[], inputs=inputs))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=sorted(SPLITS), default="dev")
    parser.add_argument("--module", type=Path, help="another version of formation/offline/provider.py")
    args = parser.parse_args()
    # The extractor reads world time into facts.world_time's values, which live beside their model columns.
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_project.settings.test")
    import django

    django.setup()
    from portability.formats.locomo import DATE_FORMAT

    provider = _provider(args.module)
    sessions = []
    for conversation in load_conversations(DEFAULT_LOCOMO, sample_ids=list(SPLITS[args.split])):
        for number in sorted({turn.session for turn in conversation.turns}):
            turns = [turn for turn in conversation.turns if turn.session == number]
            # As formation gives it (NumberedMessage.as_input): the extractor resolves relative times against it.
            said = datetime.strptime(turns[0].date.strip(), DATE_FORMAT).strftime("%Y-%m-%d %H:%M")
            sessions.append(
                [
                    {"number": position, "role": "user", "text": f"{turn.speaker}: {turn.text}", "date": said}
                    for position, turn in enumerate(turns, start=1)
                ]
            )
    started = time.process_time()
    _form(provider, sessions[0])
    first = time.process_time() - started
    per_session = []
    for messages in sessions:
        started = time.process_time()
        _form(provider, messages)
        per_session.append((time.process_time() - started) * 1000)
    per_session.sort()
    print(
        json.dumps(
            {
                "split": args.split,
                "sessions": len(sessions),
                "turns_per_session_mean": round(statistics.mean(len(s) for s in sessions), 1),
                "first_call_cpu_ms": round(first * 1000, 1),
                "cpu_ms_per_session_mean": round(statistics.mean(per_session), 1),
                "cpu_ms_per_session_median": round(statistics.median(per_session), 1),
                "cpu_ms_per_session_p95": round(per_session[int(0.95 * (len(per_session) - 1))], 1),
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
