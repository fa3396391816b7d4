# Two entry points: `make demo` (set up, then run Doc Bridge on the bundled fixture) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
FIXTURE := fixtures/acme

.PHONY: setup demo test attacks test-python test-vscode test-vscode-real test-vscode-real-install test-vscode-real-ui lint bench bench-retrieval bench-fidelity clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,mcp,langchain,llamaindex,semantic]'
	touch $(STAMP)

demo: setup
	$(BIN)/docbridge scan --root $(FIXTURE)
	$(BIN)/docbridge check --root $(FIXTURE) --fail-on never
	$(BIN)/docbridge search "how is sales tax calculated" --root $(FIXTURE) --limit 3
	$(BIN)/docbridge query acme-billing --root $(FIXTURE) --text

test: setup test-python test-vscode

test-python: setup
	$(BIN)/ruff check engine lsp docbridge tests
	$(BIN)/python -m pytest -q

# The attacks of a hostile repository, client, agent or endpoint (they also run in test-python), with a count
# of attempts and passes per class.
attacks: setup
	$(BIN)/python -m pytest -q -m attack

# The VS Code extension: install from the lock file, type-check, unit-test, package the .vsix.
test-vscode:
	cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error
	cd editors/vscode && npm run --silent lint
	cd editors/vscode && npm test
	cd editors/vscode && npm run --silent package

# The extension inside a real VS Code: code-server and Playwright (driving Debian's chromium) installed into
# one scratch folder, then the UI test on the freshly packaged .vsix. Screenshots go to $(VSCODE_REAL)/artifacts.
VSCODE_REAL ?= .cache/vscode-real

test-vscode-real: test-vscode-real-install test-vscode-real-ui

test-vscode-real-install: setup
	bash tests/vscode_real/install.sh $(VSCODE_REAL) $(BIN)/python

test-vscode-real-ui: setup
	cd editors/vscode && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; }
	cd editors/vscode && npm run --silent package
	DOCBRIDGE_VSCODE_REAL_DIR=$(VSCODE_REAL) $(BIN)/python -m pytest -q -m vscode_real tests/test_vscode_real.py

# Retrieval suites on real repositories (bench/real/README.md): not part of `make test`. Each suite runs when
# its checkout is in $(REAL_REPOS)/<suite> at the pinned commit; the others are named as missing.
REAL_REPOS ?= bench/real/checkouts
REAL_SUITES := tanstack-query vitest vite

bench-retrieval: setup
	@status=0; missing=""; for suite in $(REAL_SUITES); do \
	  dir="$(REAL_REPOS)/$$suite"; file="bench/real/$$suite/retrieval-suite.json"; \
	  pinned=$$($(BIN)/python -c "import json,sys; print(json.load(open(sys.argv[1]))['commit'])" "$$file"); \
	  if [ ! -d "$$dir" ]; then missing="$$missing $$suite"; continue; fi; \
	  head=$$(git -C "$$dir" rev-parse HEAD 2>/dev/null || echo unknown); \
	  if [ "$$head" != "$$pinned" ]; then \
	    echo "$$suite: $$dir is at $$head, the suite is pinned to $$pinned; skipped."; missing="$$missing $$suite"; continue; fi; \
	  baseline="bench/real/$$suite/retrieval-baseline.json"; \
	  $(BIN)/docbridge bench retrieval "$$file" --root "$$dir" $$([ -f "$$baseline" ] && echo --baseline "$$baseline") \
	    || status=1; echo; \
	done; \
	if [ -n "$$missing" ]; then echo "missing checkouts:$$missing (see bench/real/README.md; REAL_REPOS=$(REAL_REPOS))"; fi; \
	exit $$status

# check findings and go-to-definition on public repositories against labels written by reading them
# (bench/fidelity/README.md): not part of `make test`. bench/fidelity/checkouts.sh clones the corpus into $(REAL_REPOS).
bench-fidelity: setup
	$(BIN)/docbridge bench fidelity --checkouts $(REAL_REPOS) --baseline bench/fidelity/baseline.json

lint: setup
	$(BIN)/ruff check engine lsp docbridge tests

clean:
	rm -rf $(VENV) .cache .pytest_cache .ruff_cache fixtures/*/.docbridge editors/vscode/node_modules editors/vscode/out
