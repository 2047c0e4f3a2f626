"""Importing the layer stays cheap (its docstring examples run in the package-wide doctest run)."""

from __future__ import annotations

import subprocess
import sys


def test_import_does_not_load_heavy_dependencies():
    code = ("import sys, allocopt, allocopt.cbmai, allocopt.algorithms, allocopt.simulate; "
            "allocopt.CBMAIProblem; allocopt.solve_cbmai; "
            "print(sorted(m for m in ('pulp', 'matplotlib', 'cvxpy', 'scipy.optimize', 'joblib') if m in sys.modules))")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"


def test_reference_instances_live_in_the_cbmai_layer():
    # library code must not depend on its test data: building a Table 1 instance leaves allocopt.testing unloaded
    code = ("import sys, allocopt; allocopt.CBMAIProblem.from_reference('cbmai-d1p'); "
            "print('allocopt.testing' in sys.modules)")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "False"
    from allocopt.cbmai.instances import CBMAI_INSTANCES
    from allocopt.testing import REFERENCE_INSTANCES

    for name, instance in CBMAI_INSTANCES.items():
        assert REFERENCE_INSTANCES[name] is instance  # re-exported, not copied
