"""With the compiled kernels switched off (``allocopt._numba.compiled_kernels(False)``), the package takes its numpy and
Python specification paths and neither compiles nor loads a numba function (the switch's promise in
:mod:`allocopt._numba`). Run in a fresh process, where no dispatcher has a signature yet; numba's own record of each
dispatcher's signatures is the measure."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")

SWITCHED_OFF = """
import json, warnings
import numpy as np
from allocopt import TopKProblem, solve_topk
from allocopt._numba import compiled_functions, compiled_kernels
from allocopt.algorithms import identify
from allocopt.topk import solve_topk_batch

warnings.simplefilter("ignore")
used = {}
with compiled_kernels(False):
    for family in ("gaussian", "bernoulli", "poisson", "exponential"):
        for kind in ("confidence", "budget"):
            for theta in ([0.8, 0.6, 0.55, 0.3, 0.2], [0.8, 0.8, 0.6, 0.3, 0.3]):  # untied, tied
                solve_topk(TopKProblem(theta, 2, family=family), kind=kind)
            solve_topk_batch(np.array([[0.8, 0.6, 0.55, 0.3, 0.2], [0.7, 0.6, 0.6, 0.2, 0.1]]), 2, family=family,
                             kind=kind)
            used[family + " " + kind] = sorted(function.py_func.__module__ + "." + function.py_func.__name__
                                               for function in compiled_functions() if function.signatures)
    for rule in ("kkt-ts", "track-and-stop", "uniform"):
        identify(TopKProblem([0.8, 0.5, 0.3, 0.2], 2, family="bernoulli"), rule, delta=0.1, n_runs=3, rng=0, n_jobs=1)
        used[rule] = sorted(function.py_func.__module__ + "." + function.py_func.__name__
                            for function in compiled_functions() if function.signatures)
print(json.dumps(used))
"""


def test_switched_off_solves_and_runs_compile_nothing(tmp_path):
    # before the fix, the Gaussian surrogate's staircase walks (topk._exact.starts) compiled on every non-Gaussian
    # solve whatever the switch said
    completed = subprocess.run([sys.executable, "-c", SWITCHED_OFF], capture_output=True, text=True, check=True,
                               env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    used = json.loads(completed.stdout.strip().splitlines()[-1])
    assert used == {key: [] for key in used}
    assert len(used) == 11
