"""LoCoMo (Maharana et al., ACL 2024) conversations, the benchmark's format (../shared/benchmarks/README.md).

Each conversation is its own memory store, as in the benchmark's protocol: agent `<--agent>-<sample_id>`, whose two
speakers are its users. Question/answer items are evaluation data and are never imported. An observation's relative
times ("last Saturday", "last year") are its session's: its world time is read against the session's date
(facts.grammar.world_time_phrases)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from portability.formats.common import ImportFormatError, require_file
from portability.records import ImportedBlob, ImportedFact, ImportedMessage, ImportedSession, MemoryImport

SESSION_KEY = re.compile(r"^session_(\d+)$")
DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # "1:56 pm on 8 May, 2023"


def _session_date(conversation: dict, key: str, sample_id: str) -> datetime:
    raw = conversation.get(f"{key}_date_time")
    try:
        return datetime.strptime(str(raw).strip(), DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError as error:
        raise ImportFormatError(f"{sample_id} {key}: unreadable date {raw!r}") from error


def _dia_ids(raw: object) -> list[str]:
    """Evidence ids come as "D1:3", as lists, and malformed as "D8:6; D9:17" or "D4:17, D4:19"."""
    values = raw if isinstance(raw, list) else [raw]
    return [part.strip() for value in values for part in re.split(r"[;,]", str(value)) if part.strip()]


def _turn_content(turn: dict) -> str:
    """The benchmark's own rendering of an image turn: the text, then what was shared."""
    text = str(turn.get("text") or "")
    caption = turn.get("blip_caption")
    return f"{text} [shares {caption}]" if caption else text


def _conversation_import(sample: dict, *, agent_prefix: str, source: str) -> MemoryImport:
    # Imported here: the readers' module is read before Django is set up (benchmarks take DATE_FORMAT from it).
    from facts.grammar.world_time_phrases import world_time_said

    sample_id = str(sample["sample_id"])
    conversation = sample["conversation"]
    owner = str(conversation["speaker_a"])
    data = MemoryImport(format="locomo", source=source, agent_external_id=f"{agent_prefix}-{sample_id}")
    numbers = {key: int(match[1]) for key in conversation if (match := SESSION_KEY.match(key))}
    keys = sorted(numbers, key=numbers.__getitem__)
    message_session: dict[str, str] = {}
    dates: dict[str, datetime] = {}
    for key in keys:
        started = dates[key] = _session_date(conversation, key, sample_id)
        # The session belongs to speaker_a (a session has one user); who said what is kept per message.
        session = ImportedSession(external_id=f"{sample_id}:{key}", user_external_id=owner)
        for position, turn in enumerate(conversation[key]):
            dia_id = str(turn["dia_id"])
            extra = {name: turn[name] for name in ("blip_caption", "img_url", "query") if turn.get(name)}
            session.messages.append(
                ImportedMessage(
                    original_id=dia_id,
                    role="user",
                    content=_turn_content(turn),
                    # Turns carry no time of their own: one second apart keeps their order and the session's date.
                    created_at=started + timedelta(seconds=position),
                    metadata={"speaker": turn["speaker"], "dia_id": dia_id, **extra},
                )
            )
            message_session[dia_id] = session.external_id
        data.sessions.append(session)
    for observation_key, by_speaker in (sample.get("observation") or {}).items():
        key = observation_key.removesuffix("_observation")
        for speaker, statements in by_speaker.items():
            for position, (statement, evidence) in enumerate(statements):
                dia_ids = _dia_ids(evidence)
                unknown = [dia_id for dia_id in dia_ids if dia_id not in message_session]
                if unknown:
                    raise ImportFormatError(f"{sample_id} {observation_key}: evidence {unknown} names no turn")
                data.facts.append(
                    ImportedFact(
                        original_id=f"{sample_id}:{observation_key}:{speaker}:{position}",
                        content=str(statement),
                        user_external_id=str(speaker),
                        # About one speaker, and visible to both: every question may look at both speakers' memory.
                        scopes=("user", "agent"),
                        valid_from=dates.get(key),
                        metadata={"dia_ids": dia_ids, "speaker": speaker},
                        source_session=f"{sample_id}:{key}" if key in dates else None,
                        source_messages=tuple((message_session[dia_id], dia_id) for dia_id in dia_ids),
                        world_time=world_time_said(str(statement), said_on=dates[key].date()) if key in dates else None,
                    )
                )
    for summary_key, summary in (sample.get("session_summary") or {}).items():
        key = summary_key.removesuffix("_summary")
        if key not in dates or not str(summary).strip():
            data.skipped["session summaries without a session"] += 1
            continue
        data.blobs.append(
            ImportedBlob(
                original_id=f"{sample_id}:{summary_key}",
                scope="session",
                versions=(str(summary),),
                user_external_id=owner,
                session_external_id=f"{sample_id}:{key}",
            )
        )
    data.skipped["question/answer items (evaluation data)"] += len(sample.get("qa") or ())
    return data


def read_locomo(*, path: Path, agent_external_id: str, user_external_id: str | None) -> list[MemoryImport]:
    if user_external_id:
        raise ImportFormatError("LoCoMo conversations name their own speakers; --user does not apply")
    try:
        samples = json.loads(require_file(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ImportFormatError(f"{path.name}: not JSON ({error.msg})") from error
    if isinstance(samples, dict):
        samples = [samples]
    if not isinstance(samples, list) or not all(isinstance(s, dict) and "conversation" in s for s in samples):
        raise ImportFormatError(f"{path.name}: expected a list of LoCoMo samples with 'sample_id' and 'conversation'")
    return [_conversation_import(sample, agent_prefix=agent_external_id, source=path.name) for sample in samples]
