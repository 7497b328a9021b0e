"""The offline (rule-based) extractor: a deterministic stand-in for the LLM that answers formation's prompts from
their structured inputs (provider.py, its clause rules in clauses.py), chosen by LLM_PROVIDER=offline through the
settings (memory_project.settings: LLM_PROVIDER_CLASSES). It reads statements with the facts' grammar
(facts.grammar)."""
