"""Reading a fact statement in English: what it says (its subject, relations and objects: graph.py), what makes it
unusable alone (its defects: defects.py), and the word-level checks every formation prompt's rules ask of a model's
statements (output_rules.py). spaCy's pipeline comes from core (core.llm.spacy_model); the grammar is the facts'.

Used by the entity graph of facts written through the API and imports (facts.services.graph_extraction), by the
checks of formation's and the reflections' LLM replies, and by the offline extractor (formation.offline)."""
