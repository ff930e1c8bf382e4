# Two commands: `make demo` and `make test`. Both set up .venv when it is missing.
# Debian's python3 is built with PGO and LTO; a pyenv build without them parses logs about three
# times slower on these machines. Use it when it can make a venv, else whatever python3 is first.
PY ?= $(shell /usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null && echo /usr/bin/python3 || echo python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint setup bench bench-live bench-tui clean samples

$(STAMP): pyproject.toml hatch_build.py mtptui/core/_compiled.pyx
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/mtptui demo

# Files on 4 workers, each file on one (its fixtures are per file): the integration tier mostly
# waits on its container hosts, so 4 workers beat 2 even on 2 cores. Each worker that needs the
# container hosts boots its own (nspawn.Cluster takes a free slot). Then, one at a time, the few
# tests that compare throughputs the simulator measures (marked alone): on 2 cores shared with
# the rest, its clients lag behind its clock and the figures say nothing of its model.
test: $(STAMP)
	$(BIN)/python -m pytest -q -n 4 --dist loadfile -m "not alone"
	$(BIN)/python -m pytest -q -m alone

# ruff (a small rule set) and mypy, as CI runs them
lint: $(STAMP)
	$(BIN)/ruff check mtptui tests bench docs
	$(BIN)/mypy mtptui

bench: $(STAMP)
	$(BIN)/python bench/parse_bench.py

# the dashboard headless: 1,000,000-line replay, 50,000 lines/s live, keypress latency
bench-tui: $(STAMP)
	$(BIN)/python bench/tui_bench.py

# as root: boots container hosts (see bench/live_bench.py)
bench-live: $(STAMP)
	$(BIN)/python bench/live_bench.py

samples: $(STAMP)
	$(BIN)/python sample_logs/regenerate.py

clean:
	rm -rf $(VENV) build dist *.egg-info
