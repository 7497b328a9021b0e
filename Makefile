# The two commands: `make run` (everything up on embedded defaults) and `make test` (everything tested).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ARGS ?=

.PHONY: run test install lint clean

run: $(STAMP)
	$(BIN)/python -m memory_project.devstack run

test: $(STAMP)
	$(BIN)/python -m memory_project.devstack test $(ARGS)

install: $(STAMP)

# torch is installed on its own first, pinned to the CPU build; requirements then find it satisfied.
$(STAMP): requirements/base.txt requirements/local.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -r requirements/local.txt
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) .data
