"""The examples in the docstrings run, and importing the layer stays cheap."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys

import pytest

MODULES = [
    "allocopt.cbmai.problem",
    "allocopt.cbmai.bases",
    "allocopt.cbmai.solve",
    "allocopt.cbmai.scores",
    "allocopt.cbmai.hardness",
    "allocopt.algorithms.sfsr",
    "allocopt.algorithms.uslp",
    "allocopt.algorithms.cbmai_error_rate",
    "allocopt.simulate",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_import_does_not_load_heavy_dependencies():
    code = ("import sys, allocopt, allocopt.cbmai, allocopt.algorithms, allocopt.simulate; "
            "allocopt.CBMAIProblem; allocopt.solve_cbmai; "
            "print(sorted(m for m in ('pulp', 'matplotlib', 'cvxpy', 'scipy.optimize', 'joblib') if m in sys.modules))")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


def test_reference_instances_live_in_the_cbmai_layer():
    # library code must not depend on its test data: building a Table 1 instance leaves allocopt.testing unloaded
    import subprocess
    import sys

    code = ("import sys, allocopt; allocopt.CBMAIProblem.from_reference('cbmai-d1p'); "
            "print('allocopt.testing' in sys.modules)")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "False"
    from allocopt.cbmai.instances import CBMAI_INSTANCES
    from allocopt.testing import REFERENCE_INSTANCES

    for name, instance in CBMAI_INSTANCES.items():
        assert REFERENCE_INSTANCES[name] is instance  # re-exported, not copied
