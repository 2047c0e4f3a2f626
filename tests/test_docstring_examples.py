"""Every documented module carries runnable docstring examples.

The examples themselves run in the package-wide doctest run (``--doctest-modules`` over ``allocopt`` in the
pytest configuration); this test makes sure the modules below keep having some, so that a module whose
examples were deleted does not pass silently.
"""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES_WITH_EXAMPLES = [
    "allocopt._json", "allocopt._result", "allocopt.families", "allocopt.simulate",
    "allocopt.topk.problem", "allocopt.topk.solve", "allocopt.topk.batch", "allocopt.topk.kkt",
    "allocopt.topk.kernels",
    "allocopt.cbmai.problem", "allocopt.cbmai.bases", "allocopt.cbmai.solve", "allocopt.cbmai.scores",
    "allocopt.cbmai.hardness",
    "allocopt.complexity", "allocopt.complexity.top_m", "allocopt.complexity.fixed_budget",
    "allocopt.complexity.eps_top_k", "allocopt.complexity.lil", "allocopt.complexity.combinatorial",
    "allocopt.complexity.reporting", "allocopt.testing.bandit_instances",
    "allocopt.algorithms.cbmai.sfsr", "allocopt.algorithms.cbmai.uslp", "allocopt.algorithms.cbmai.error_rate",
    "allocopt.algorithms.engine.statistics", "allocopt.algorithms.engine.stopping",
    "allocopt.algorithms.engine.confidence_bounds", "allocopt.algorithms.engine.counter_stream",
    "allocopt.algorithms.identify", "allocopt.algorithms.posterior",
    "allocopt.algorithms.rules.uniform", "allocopt.algorithms.rules.kkt_ts", "allocopt.algorithms.rules.track_and_stop",
    "allocopt.algorithms.rules.dt_ts", "allocopt.algorithms.rules.bts", "allocopt.algorithms.rules.ocba",
    "allocopt.algorithms.rules.top_two", "allocopt.algorithms.rules.lucb", "allocopt.algorithms.rules.kl_racing",
    "allocopt.algorithms.rules.ugape", "allocopt.algorithms.rules.at_lucb", "allocopt.topk.tracking",
    "allocopt.algorithms.chunks",
    "allocopt.experiments", "allocopt.experiments.spec", "allocopt.experiments.store", "allocopt.experiments.runner",
    "allocopt.experiments.status", "allocopt.experiments.tables", "allocopt.experiments.report",
    "allocopt.experiments.styles", "allocopt._deps",
]


@pytest.mark.parametrize("name", MODULES_WITH_EXAMPLES)
def test_module_has_docstring_examples(name):
    module = importlib.import_module(name)
    examples = sum(len(test.examples) for test in doctest.DocTestFinder().find(module))
    assert examples > 0, f"{name} lost its docstring examples"
