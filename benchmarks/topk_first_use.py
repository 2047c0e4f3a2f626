"""Two figures of the exact top-k solver that a user meets first, printed side by side in one run.

1. Tied means: the median time of ``solve_topk(method="exact")`` on an instance whose means come in tied pairs
   (as empirical means of Bernoulli arms do) against the same call on distinct means, K = 20, k = 10, for each
   family with a compiled pair kernel, and their ratio (goal: at most 3). The route each call took (the
   result's message) is printed beside it.
2. First use: the CPU time (user + system) of a fresh Python process that imports allocopt and makes its first
   Bernoulli ``solve_topk`` call, with an empty numba cache (``NUMBA_CACHE_DIR`` a new temporary directory),
   then the same process again with that cache filled (goal for the first: at most 5 s).

The machine is shared: the figures are measured under its load (CPU time is less sensitive to it than wall
time). Run: python benchmarks/topk_first_use.py [--repeats 200] [--no-first-use]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from allocopt import TopKProblem, solve_topk

FAMILIES = ("gaussian", "bernoulli", "poisson", "exponential")
N_ARMS = 20

_FIRST_SOLVE = """
import resource
import numpy as np
from allocopt import TopKProblem, solve_topk
result = solve_topk(TopKProblem(np.linspace(0.9, 0.1, 20), 10, family="bernoulli"))
usage = resource.getrusage(resource.RUSAGE_SELF)
print(usage.ru_utime + usage.ru_stime, result.status)
"""


def instances(family: str) -> tuple[TopKProblem, TopKProblem]:
    """Distinct means and tied pairs of means (the same range), K = 20, k = 10."""
    low, high = (0.1, 0.9) if family == "bernoulli" else (0.5, 3.0)
    distinct = np.linspace(high, low, N_ARMS)
    tied = np.repeat(np.linspace(high, low, N_ARMS // 2), 2)  # arms 2m and 2m + 1 tied; the 10th and 11th differ
    k = N_ARMS // 2
    if family == "gaussian":
        return TopKProblem(distinct, k, variance=0.25), TopKProblem(tied, k, variance=0.25)
    return TopKProblem(distinct, k, family=family), TopKProblem(tied, k, family=family)


def median_time(problem: TopKProblem, repeats: int) -> float:
    solve_topk(problem)  # compiled (or loaded from the cache) before the clock starts
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        solve_topk(problem)
        times.append(time.perf_counter() - started)
    return float(np.median(times))


def tied_ratios(repeats: int) -> None:
    print(f"1. Tied means, K = {N_ARMS}, k = {N_ARMS // 2}: median time per solve_topk(method='exact') call")
    print(f"   {'family':<12} {'distinct':>10} {'tied':>10} {'ratio':>7}  route of the tied call")
    for family in FAMILIES:
        distinct, tied = instances(family)
        untied_time, tied_time = median_time(distinct, repeats), median_time(tied, repeats)
        route = solve_topk(tied).message.split(";")[0]
        print(f"   {family:<12} {untied_time * 1e6:>8.1f}us {tied_time * 1e6:>8.1f}us {tied_time / untied_time:>6.2f}x"
              f"  {route}")


def first_use() -> None:
    print("2. First Bernoulli solve_topk in a fresh process (CPU seconds, user + system)")
    with tempfile.TemporaryDirectory() as cache:
        environment = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for label in ("empty numba cache", "filled numba cache"):
            done = subprocess.run([sys.executable, "-c", _FIRST_SOLVE], env=environment, capture_output=True,
                                  text=True, check=True)
            cpu, status = done.stdout.split()
            print(f"   {label:<20} {float(cpu):6.2f} s  ({status})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--no-first-use", action="store_true")
    arguments = parser.parse_args()
    tied_ratios(arguments.repeats)
    if not arguments.no_first_use:
        first_use()


if __name__ == "__main__":
    main()
