"""LoCoMo for the retrieval benchmarks: the conversations, their questions and the paper's recall@k.

The data is read from ../shared/benchmarks/locomo/locomo10.json (CC BY-NC 4.0: evaluation only, never copied into
this repository). Protocol (../shared/benchmarks/README.md): per question with usable evidence, the fraction of its
evidence turn ids found among the sources of the top k retrieved items, averaged per category and overall."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parents[2]
DEFAULT_LOCOMO = REPO_DIR.parent / "shared" / "benchmarks" / "locomo" / "locomo10.json"
KS = (5, 10, 25, 50)
SPLITS = {
    "dev": ("conv-26", "conv-30"),
    "eval": ("conv-41", "conv-42", "conv-43", "conv-44", "conv-47", "conv-48", "conv-49", "conv-50"),
}
SPLITS["all"] = SPLITS["dev"] + SPLITS["eval"]
CATEGORIES = {4: "single-hop", 1: "multi-hop", 2: "temporal", 3: "open-domain", 5: "adversarial"}
SESSION_KEY = re.compile(r"^session_(\d+)$")

# The paper's DRAGON figures (Maharana et al. 2024, Table 3), overall and per category at k=10.
PAPER = {
    "turns": {"overall": {5: 58.8, 10: 67.5, 25: 79.9, 50: 84.8}},
    "observations": {"overall": {5: 49.6, 10: 57.1, 25: 66.0, 50: 71.1}},
}
PAPER_CATEGORY_AT_10 = {
    "turns": {"single-hop": 72.8, "multi-hop": None, "temporal": 97.3, "open-domain": 53.8, "adversarial": 54.3},
    "observations": {
        "single-hop": 57.4,
        "multi-hop": 53.1,
        "temporal": 83.8,
        "open-domain": 46.2,
        "adversarial": 41.5,
    },
}


@dataclass(frozen=True)
class Question:
    sample_id: str
    text: str
    category: str
    evidence: frozenset[str]
    answer: str = ""  # the gold answer (an adversarial question's is what the conversation does not say)


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    date: str
    session: int


@dataclass
class Conversation:
    sample_id: str
    turns: list[Turn] = field(default_factory=list)
    observations: list[tuple[str, str, tuple[str, ...], str]] = field(default_factory=list)  # text, speaker, ids, date
    questions: list[Question] = field(default_factory=list)
    skipped_questions: int = 0

    def corpora(self) -> dict[str, dict]:
        """Per corpus: each item's sources (dia ids) and several renderings of its text, for exploration."""
        previous = {}
        for before, turn in zip([None, *self.turns], self.turns, strict=False):
            previous[turn.dia_id] = before if before is not None and before.session == turn.session else None
        turn_texts = {
            "raw": [t.text for t in self.turns],
            "speaker": [f"{t.speaker}: {t.text}" for t in self.turns],
            "paper": [f'({t.date}) {t.speaker} said, "{t.text}"' for t in self.turns],
            "speaker_prev": [
                (f"{p.speaker}: {p.text}\n" if (p := previous[t.dia_id]) else "") + f"{t.speaker}: {t.text}"
                for t in self.turns
            ],
        }
        return {
            "turns": {"sources": [(t.dia_id,) for t in self.turns], "texts": turn_texts},
            "observations": {
                "sources": [ids for _, _, ids, _ in self.observations],
                "texts": {
                    "raw": [text for text, _, _, _ in self.observations],
                    "date": [f"({date}) {text}" for text, _, _, date in self.observations],
                },
            },
        }


def _turn_text(turn: dict) -> str:
    text = str(turn.get("text") or "")
    caption = turn.get("blip_caption")
    return f"{text} [shares {caption}]" if caption else text


def _ids(raw: object) -> list[str]:
    values = raw if isinstance(raw, list) else [raw]
    return [part.strip() for value in values for part in re.split(r"[;,]", str(value)) if part.strip()]


def load_conversations(path: Path, *, sample_ids: Iterable[str]) -> list[Conversation]:
    wanted = list(sample_ids)
    samples = {sample["sample_id"]: sample for sample in json.loads(Path(path).read_text(encoding="utf-8"))}
    conversations = []
    for sample_id in wanted:
        sample = samples[sample_id]
        raw = sample["conversation"]
        conversation = Conversation(sample_id=sample_id)
        keys = sorted((k for k in raw if SESSION_KEY.match(k)), key=lambda k: int(SESSION_KEY.match(k)[1]))
        dates = {}
        for key in keys:
            number = int(SESSION_KEY.match(key)[1])
            dates[key] = raw.get(f"{key}_date_time", "")
            for turn in raw[key]:
                conversation.turns.append(
                    Turn(
                        dia_id=str(turn["dia_id"]),
                        speaker=turn["speaker"],
                        text=_turn_text(turn),
                        date=dates[key],
                        session=number,
                    )
                )
        known = {turn.dia_id for turn in conversation.turns}
        for observation_key, by_speaker in (sample.get("observation") or {}).items():
            date = dates.get(observation_key.removesuffix("_observation"), "")
            for speaker, statements in by_speaker.items():
                for statement, evidence in statements:
                    conversation.observations.append((str(statement), speaker, tuple(_ids(evidence)), date))
        for qa in sample.get("qa") or ():
            evidence = frozenset(i for i in _ids(qa.get("evidence") or []) if i in known)
            if not evidence:
                conversation.skipped_questions += 1
                continue
            conversation.questions.append(
                Question(
                    sample_id=sample_id,
                    text=str(qa["question"]),
                    category=CATEGORIES[int(qa["category"])],
                    evidence=evidence,
                    answer=str(qa.get("answer", qa.get("adversarial_answer", ""))),
                )
            )
        conversations.append(conversation)
    return conversations


def question_recall(question: Question, retrieved_sources: Sequence[Iterable[str]], k: int) -> float:
    found = set()
    for sources in retrieved_sources[:k]:
        found.update(sources)
    return 100.0 * len(question.evidence & found) / len(question.evidence)


def recall_table(ranked: Iterable[tuple[Question, Sequence[Iterable[str]]]]) -> dict:
    """{"overall": {k: recall}, "<category>": {k: recall}, "questions": {...counts}} from (question, sources of the
    retrieved items, best first) pairs."""
    sums: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    counts: dict[str, int] = defaultdict(int)
    for question, sources in ranked:
        for group in ("overall", question.category):
            counts[group] += 1
            for k in KS:
                sums[group][k] += question_recall(question, sources, k)
    table = {group: {k: round(sums[group][k] / counts[group], 2) for k in KS} for group in sums}
    table["questions"] = dict(counts)
    return table
