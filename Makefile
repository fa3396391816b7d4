# Two entry points: `make demo` (set up, then run Doc Bridge on the bundled fixture) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORE := $(VENV)/.installed-core
STAMP := $(VENV)/.installed
FIXTURE := fixtures/acme
EXTRAS := dev,mcp,langchain,llamaindex,semantic,semantic-alternatives,tokens
# pip's own output (and any index warnings) goes to a log; a failed install prints its end
PIP_LOG := $(VENV)/pip.log
PIP = $(BIN)/python -m pip --disable-pip-version-check --no-input
quiet = { $(1) >> $(PIP_LOG) 2>&1 || { tail -n 40 $(PIP_LOG); echo "setup failed; pip's whole log: $(PIP_LOG)"; exit 1; }; }

.PHONY: setup setup-core demo test attacks test-python test-vscode test-vscode-real test-vscode-real-install test-vscode-real-ui static layers bench bench-retrieval bench-fidelity dist wheel clean

# setup: everything the tests use (every extra); setup-core: Doc Bridge alone, all the demo needs
setup: $(STAMP)
setup-core: $(CORE)

$(CORE): pyproject.toml
	@echo "setup: $(VENV) with Doc Bridge and its dependencies (pip's log: $(PIP_LOG))"
	@[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	@$(call quiet,$(PIP) install --upgrade pip)
	@$(call quiet,$(PIP) install -e .)
	@touch $(CORE)

$(STAMP): $(CORE)
	@echo "setup: the extras and test tools (dev, mcp, langchain, llamaindex, semantic, semantic-alternatives, tokens)"
	@$(call quiet,$(PIP) install -e '.[$(EXTRAS)]')
	@touch $(STAMP)

DEMO_RUN = @printf '\n$$ docbridge %s\n' '$(1)'; $(BIN)/docbridge $(1)

demo: setup-core
	$(call DEMO_RUN,scan --root $(FIXTURE))
	$(call DEMO_RUN,check --root $(FIXTURE) --fail-on never)
	$(call DEMO_RUN,search "how is sales tax calculated" --root $(FIXTURE) --limit 3)
	$(call DEMO_RUN,query acme-billing --root $(FIXTURE) --text)

test: setup test-python test-vscode

test-python: setup static
	$(BIN)/docbridge check --root . --fail-on warning   # this repository's own docs: links, anchors, mentions
	$(BIN)/python -m pytest -q

# The attacks of a hostile repository, client, agent or endpoint (they also run in test-python), with a count
# of attempts and passes per class.
attacks: setup
	$(BIN)/python -m pytest -q -m attack

# The wheel of Doc Bridge, shipped inside the VS Code extension (which installs it into a private environment
# when it finds no server); `make dist` puts the wheel and the extension's .vsix in dist/.
VSCODE_SERVER := editors/vscode/server

wheel: setup-core
	@rm -rf $(VSCODE_SERVER) && mkdir -p $(VSCODE_SERVER)
	@$(call quiet,$(PIP) wheel --no-deps --wheel-dir $(VSCODE_SERVER) .)
	@echo "wheel: $$(ls $(VSCODE_SERVER)/*.whl)"

dist: test-vscode
	@mkdir -p dist && cp $(VSCODE_SERVER)/*.whl editors/vscode/docbridge.vsix dist/
	@echo "dist: $$(cd dist && ls docbridge*.whl docbridge.vsix | tr '\n' ' ')"

# The VS Code extension: install from the lock file, type-check, unit-test, package the .vsix (with the wheel).
test-vscode: wheel
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

test-vscode-real-ui: setup wheel
	cd editors/vscode && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; }
	cd editors/vscode && npm run --silent package
	DOCBRIDGE_VSCODE_REAL_DIR=$(VSCODE_REAL) $(BIN)/python -m pytest -q -m vscode_real tests/test_vscode_real.py \
	  tests/test_vscode_real_setup.py

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
	  for part in bench/real/$$suite/*-suite.json; do \
	    baseline="$${part%-suite.json}-baseline.json"; \
	    $(BIN)/docbridge bench retrieval "$$part" --root "$$dir" $$([ -f "$$baseline" ] && echo --baseline "$$baseline") \
	      $(if $(HYBRID),--hybrid) || status=1; echo; \
	  done; \
	done; \
	if [ -n "$$missing" ]; then echo "missing checkouts:$$missing (see bench/real/README.md; REAL_REPOS=$(REAL_REPOS))"; fi; \
	exit $$status

# check findings and go-to-definition on public repositories against labels written by reading them
# (bench/fidelity/README.md): not part of `make test`. bench/fidelity/checkouts.sh clones the corpus into $(REAL_REPOS).
bench-fidelity: setup
	$(BIN)/docbridge bench fidelity --checkouts $(REAL_REPOS) --baseline bench/fidelity/baseline.json

# The static checks. import-linter and mypy read folders, not the import system, so they run in the installed
# package's layout (engine/ and lsp/ under docbridge/, as pyproject.toml's package-dir installs them), built of
# links to the repository's files by tests/support/package_view.py.
VIEW := .cache/package-view
static: setup
	$(BIN)/ruff check engine lsp docbridge tests
	@$(BIN)/python tests/support/package_view.py . $(VIEW) > /dev/null
	cd $(VIEW) && ../../$(BIN)/lint-imports --no-cache ../../pyproject.toml   # the layers (docs/architecture.md)
	cd $(VIEW) && ../../$(BIN)/mypy --config-file ../../pyproject.toml         # types: strict on state, ide, search

# The import drawing: the layers, highest first, and how many imports each makes into each layer below.
layers: setup
	@$(BIN)/python tests/support/layer_map.py

clean:
	rm -rf $(VENV) .cache .pytest_cache .ruff_cache fixtures/*/.docbridge editors/vscode/node_modules editors/vscode/out \
	  $(VSCODE_SERVER) dist build
