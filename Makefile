# allocopt: the two set-up commands of the README are `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Test workers (pytest-xdist); one BLAS thread per worker so two workers do not oversubscribe two cores.
WORKERS ?= auto
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1
export MPLBACKEND ?= Agg

.PHONY: install demo test test-dispatch typecheck test-slow test-all docs bench examples clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m allocopt demo
	@echo "The package is installed in $(VENV): run '. $(VENV)/bin/activate' to use 'allocopt' and 'python examples/...'."

test: $(STAMP)
	$(PY) -m pytest -q -n $(WORKERS) -m "not slow" --durations=15
	$(MAKE) --no-print-directory test-dispatch
	$(MAKE) --no-print-directory typecheck
	$(MAKE) --no-print-directory docs

# The tests that compare compiled kernels with their numpy specifications where log or exp enter, again: with numpy's
# results moved one ulp on half of the inputs (as numpy's AVX-512 code differs from the C library's), and, on a CPU
# where numpy dispatches to AVX-512, with that dispatch switched off (NPY_DISABLE_CPU_FEATURES).
test-dispatch: $(STAMP)
	$(PY) -m pytest -q -n $(WORKERS) -m "twin and not slow" --perturb-transcendentals
	@if $(PY) -c "from numpy._core._multiarray_umath import __cpu_features__ as f; raise SystemExit(not f.get('X86_V4'))" 2>/dev/null; then \
		echo "numpy dispatches to AVX-512 here: the twin tests again without it"; \
		NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL" $(PY) -m pytest -q -n $(WORKERS) -m "twin and not slow"; \
	fi

# Static types of the package (mypy, configured in pyproject.toml).
typecheck: $(STAMP)
	$(PY) -m mypy

# The documentation site (Sphinx: docs/ pages and the API reference from the docstrings); warnings are errors.
# Then docs/check_site.py: no script from the network (MathJax is copied into the site, so the mathematics renders
# offline) and every local link and anchor of the built site found.
docs: $(STAMP)
	$(PY) -m sphinx -b html -W --keep-going -q docs docs/_build/html
	$(PY) docs/check_site.py docs/_build/html
	@echo "documentation: docs/_build/html/index.html"

test-slow: $(STAMP)
	$(PY) -m pytest -q -n $(WORKERS) -m slow

test-all: $(STAMP)
	$(PY) -m pytest -q -n $(WORKERS)

bench: $(STAMP)
	for script in benchmarks/*.py; do $(PY) $$script || exit 1; done

examples: $(STAMP)
	for script in examples/[!_]*.py; do $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) docs/_build build dist *.egg-info .pytest_cache .hypothesis .mypy_cache examples/output benchmarks/output stores
