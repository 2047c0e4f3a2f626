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
    "allocopt.algorithms.sfsr", "allocopt.algorithms.uslp", "allocopt.algorithms.cbmai_error_rate",
    "allocopt.algorithms.statistics", "allocopt.algorithms.stopping", "allocopt.algorithms.uniform",
    "allocopt.algorithms.kkt_ts", "allocopt.algorithms.track_and_stop", "allocopt.algorithms.identify",
    "allocopt.algorithms._compiled",
    "allocopt.algorithms.dt_ts", "allocopt.algorithms.bts", "allocopt.algorithms.ocba", "allocopt.algorithms.top_two",
    "allocopt.algorithms.posterior", "allocopt.topk.tracking",
    "allocopt.algorithms.confidence_bounds", "allocopt.algorithms.lucb", "allocopt.algorithms.kl_racing",
    "allocopt.algorithms.ugape", "allocopt.algorithms.at_lucb",
]


@pytest.mark.parametrize("name", MODULES_WITH_EXAMPLES)
def test_module_has_docstring_examples(name):
    module = importlib.import_module(name)
    examples = sum(len(test.examples) for test in doctest.DocTestFinder().find(module))
    assert examples > 0, f"{name} lost its docstring examples"
