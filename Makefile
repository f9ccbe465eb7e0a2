# deadzone_id_ros: two commands for a newcomer.
#   make demo   create .venv, install everything pinned, run the main job on the simulated arm
#   make test   same install, then make lint and the whole test suite
# Other targets: make install, make install-robots, make install-ray, make demo-real, make bench, make docs, make clean,
# make test-under-load, make demo-quick-under-load (the same under 4 busy processes). See README.md and docs/.

SHELL := /bin/bash
PYTHON ?= python3
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.deps-installed
ROBOTS_STAMP := $(VENV)/.robots-installed
RAY_STAMP := $(VENV)/.ray-installed
OUT ?= out
# Per-run DDS isolation: loopback only, and a domain id derived from the make process id.
ROS_DOMAIN_ID ?= $(shell echo $$(( $$$$ % 90 + 10 )))
RUN_ENV := AMENT_PREFIX_PATH=$(VENV) ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=$(ROS_DOMAIN_ID) \
           PATH=$(VENV)/bin:$$PATH PYTHONUNBUFFERED=1

.PHONY: install install-robots install-ray lint docs test test-under-load demo demo-quick demo-quick-under-load demo-real bench clean

$(STAMP): requirements.txt constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet 'setuptools>=77.0.3,<80' wheel -c constraints.txt
	$(PIP) install --quiet -r requirements.txt -c constraints.txt
	touch $(STAMP)

install: $(STAMP)
	rm -rf build  # a stale build/lib would install modules that were moved or deleted
	$(PIP) install --quiet --no-deps --no-build-isolation --force-reinstall .

# Optional extra (about 130 MB): the example-robot-data URDF collection, for `--urdf panda` and its tests.
$(ROBOTS_STAMP): $(STAMP) requirements-robots.txt constraints.txt
	$(PIP) install --quiet -r requirements-robots.txt -c constraints.txt
	touch $(ROBOTS_STAMP)

install-robots: $(ROBOTS_STAMP)

# Optional extra (about 260 MB): Ray core, for `--engine ray` on compare and sweep (docs/cluster.md).
$(RAY_STAMP): $(STAMP) requirements-ray.txt constraints.txt
	$(PIP) install --quiet -r requirements-ray.txt -c constraints.txt
	touch $(RAY_STAMP)

install-ray: $(RAY_STAMP)

# ruff (style, import order) and mypy (types) on the package, configured in pyproject.toml.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

# The documentation site (docs/, Sphinx + MyST) into docs/_build/html. -W --keep-going -n: every warning is an error
# (after reporting them all), -E: every page re-read, so no warning hides in a cache; nitpicky: every unresolved cross-reference, heading anchor or relative file link is one.
# External links are not checked (the build has no network).
DOCS_OUT ?= docs/_build/html
docs: $(STAMP)
	rm -rf docs/_api
	$(VENV)/bin/sphinx-build -E -W --keep-going -n -q -b html docs $(DOCS_OUT)

test: lint docs install $(ROBOTS_STAMP) $(RAY_STAMP)
	$(RUN_ENV) $(PY) -m pytest test

# The suite and the quick demo while LOAD_PROCS busy processes (default 4, pure Python spin loops) compete for the
# CPUs, as on a shared lab PC. The busy processes run niced at 0 like the tests, are bounded by LOAD_SECONDS (default
# 1 h) and are killed when the target ends, fails or is interrupted (trap on EXIT).
LOAD_PROCS ?= 4
LOAD_SECONDS ?= 3600
UNDER_LOAD = pids=(); trap 'kill $${pids[@]} 2>/dev/null; wait $${pids[@]} 2>/dev/null' EXIT; \
	for i in $$(seq $(LOAD_PROCS)); do \
	  timeout $(LOAD_SECONDS) $(PYTHON) -c 'while True: pass' & pids+=($$!); \
	done; echo "$(LOAD_PROCS) busy processes running (pids $${pids[*]})";

test-under-load: lint install $(ROBOTS_STAMP) $(RAY_STAMP)
	$(UNDER_LOAD) $(MAKE) --no-print-directory test

demo-quick-under-load: install
	$(UNDER_LOAD) $(MAKE) --no-print-directory demo-quick

demo: install
	$(RUN_ENV) $(VENV)/bin/deadzone-id demo --out $(OUT)/demo

demo-quick: install
	$(RUN_ENV) $(VENV)/bin/deadzone-id demo --quick --out $(OUT)/demo-quick

demo-real: install $(ROBOTS_STAMP)
	$(RUN_ENV) $(VENV)/bin/deadzone-id demo-real --out $(OUT)/real

bench: install install-ray
	$(RUN_ENV) $(PY) bench/run_all.py --out bench/results.json

clean:
	rm -rf $(VENV) build *.egg-info $(OUT) docs/_build docs/_api
