"""``allocopt precompile`` fills numba's disk cache, and a later process loads instead of compiling (issue 32,
part 4). Compilation statistics are numba's own (each dispatcher's ``stats.cache_hits`` / ``cache_misses``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import allocopt
from allocopt.exceptions import InvalidArgumentError

pytest.importorskip("numba")

LATER_PROCESS = """
import json
import allocopt
from allocopt import _numba
from allocopt.algorithms import identify

# instances other than precompile's: the machine code depends on the argument types only
allocopt.solve_topk(allocopt.TopKProblem([1.3, 1.1, 0.4, 0.2], 1))
identify(allocopt.TopKProblem([1.0, 0.6, 0.5, 0.1], 2, variance=0.5), "uniform", n_runs=3, rng=1, n_jobs=1)
made = _numba.compiled_functions()
print(json.dumps({"functions": len(made),
                  "compiled": sum(sum(f.stats.cache_misses.values()) for f in made),
                  "loaded": sum(sum(f.stats.cache_hits.values()) for f in made)}))
"""


def test_unknown_families_and_rules_are_refused_before_any_work():
    with pytest.raises(InvalidArgumentError, match=r"'families' parameter of precompile.*'cauchy'"):
        allocopt.precompile(["cauchy"])
    with pytest.raises(InvalidArgumentError, match=r"'rules' parameter of precompile.*'no-such-rule'"):
        allocopt.precompile(["gaussian"], rules=["uniform", "no-such-rule"])


@pytest.mark.slow  # compiles the Gaussian solvers and uniform sampling's loop from an empty cache: minutes
def test_a_later_process_loads_what_precompile_compiled(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    completed = subprocess.run([sys.executable, "-m", "allocopt", "precompile", "--families", "gaussian", "--rules",
                                "uniform", "--json"], capture_output=True, text=True, env=env, timeout=3000)
    assert completed.returncode == 0, completed.stderr
    summary = json.loads(completed.stdout)
    assert summary["status"] == "optimal" and summary["cache_directory"] == str(tmp_path)
    assert summary["steps"] == ["solve gaussian confidence", "solve gaussian budget", "rule uniform on gaussian"]
    assert summary["compiled"] > 0 and summary["loaded"] == 0  # an empty cache: everything compiled
    assert list(tmp_path.rglob("*.nbi")) and list(tmp_path.rglob("*.nbc"))  # numba's index and code files

    later = subprocess.run([sys.executable, "-c", LATER_PROCESS], capture_output=True, text=True, env=env,
                           timeout=3000)
    assert later.returncode == 0, later.stderr
    counts = json.loads(later.stdout.strip().splitlines()[-1])
    assert counts["functions"] > 0 and counts["loaded"] > 0
    assert counts["compiled"] == 0  # the first solve and the first identify of this process compiled nothing
