"""Writes of facts: facts.py (create, supersede, close, erase, embed: every fact write goes through it), curation.py
(the API's and the tools' rules for hand-written facts), extraction.py and reconciliation.py (formation's steps),
deduplication.py, reference_documents.py, vector_indexes.py (per-agent HNSW indexes), access.py (access counts),
tools.py (the memory tools), graph.py (entities and relations, kept in step with the fact versions that state them),
restore.py (the lossless import's writes)."""
