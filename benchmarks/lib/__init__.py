"""What the benchmark scripts share: the throwaway stack (stack.py), LoCoMo's data and recall (locomo_data.py), the
generated facts of the scale benchmarks (synthetic_facts.py), mem0 as the side-by-side reference (mem0_store.py), the
Python client (client.py) and the instant-LLM Celery worker (formation_worker.py). None of these is a benchmark."""
