"""Accuracy of the CVXPY oracle: scaled and centred model (allocopt's default) against a plain model.

For each instance prints the certified relative gap of the default oracle and T* = 1/Gamma(psi), next to the
same CVXPY model without allocopt's scaling (T_0 and per-arm scales, tight Clarabel tolerances, rescaling), and
the exact solver's certified relative gap for comparison. Every gap comes from the shared certifier (weak
duality), not from a solver's report. With ``--write-docs`` the table goes into its section of docs/topk.md,
with the date, the machine and the load.

Run: python benchmarks/topk_oracle.py [--write-docs]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from allocopt import TopKProblem, solve_topk
from allocopt._scripts import MeasuredRun, progress_iter, write_docs_section

DOCS = Path(__file__).resolve().parent.parent / "docs" / "topk.md"
SMALL_GAMMA = "Bernoulli (0.3, 0.21, 0.2, 0.19, 0.18), k = 2, tiny Gamma*"


def instances() -> dict[str, TopKProblem]:
    rng = np.random.default_rng(1)
    return {
        "Example 1 (Gaussian, K = 5)": TopKProblem([0.51, 0.5, 0, -0.01, -0.092], 2, variance=0.25),
        SMALL_GAMMA: TopKProblem([0.3, 0.21, 0.2, 0.19, 0.18], 2, family="bernoulli"),
        "Figure 3 Bernoulli (K = 10, ties)": TopKProblem((0.8, 0.6, 0.6, 0.4, 0.4, 0.4, 0.2, 0.2, 0.2, 0.2), 3,
                                                         family="bernoulli"),
        "Poisson K = 5": TopKProblem([3, 2.1, 2, 1.9, 1.8], 2, family="poisson"),
        "exponential K = 5": TopKProblem([3, 2.1, 2, 1.9, 1.8], 2, family="exponential"),
        "heteroscedastic Gaussian K = 6": TopKProblem([1, .8, .5, .4, .1, 0], 3, variance=[1, .2, .5, 2, 1, .3]),
        "Gaussian linspace K = 50, k = 25": TopKProblem(np.linspace(1, 0, 50), 25, variance=0.25),
        "Bernoulli linspace K = 50, k = 25": TopKProblem(np.linspace(0.9, 0.1, 50), 25, family="bernoulli"),
        "Bernoulli means within 1e-6 of 0 and 1": TopKProblem([1 - 1e-6, 0.999, 0.5, 2e-6, 1e-6], 2,
                                                              family="bernoulli"),
        "Poisson k = 1, near tie, spread allocations": TopKProblem(rng.random(8), 1, family="poisson"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/topk.md")
    args = parser.parse_args()
    run = MeasuredRun.start()
    warnings.simplefilter("ignore")
    rows = ["| instance | kind | oracle: certified rel. gap | $T^*$ of the oracle's $\\psi$ | oracle time [s] "
            "| plain model: certified rel. gap | exact: certified rel. gap |", "|---|---|---|---|---|---|---|"]
    print(f"{'instance':44s} {'kind':10s} | {'oracle: rel. gap':>16s} {'T*':>16s} {'time':>6s} | "
          f"{'plain: rel. gap':>15s} | {'exact: rel. gap':>15s}")
    small_gamma = {}
    cases = [(name, problem, kind) for name, problem in instances().items() for kind in ("confidence", "budget")]
    for name, problem, kind in progress_iter(cases, desc="oracle instances"):
        started = time.perf_counter()
        default = solve_topk(problem, method="cvxpy", kind=kind)
        elapsed = time.perf_counter() - started
        try:
            plain = solve_topk(problem, method="cvxpy", kind=kind, scale=False)
            plain_gap = f"{plain.relative_gap:.1e}"
        except Exception as error:  # the plain model sometimes fails outright
            plain, plain_gap = None, f"failed ({type(error).__name__})"
        exact = solve_topk(problem, kind=kind)
        print(f"{name:44s} {kind:10s} | {default.relative_gap:16.1e} {default.characteristic_time:16.6f} "
              f"{elapsed:6.2f} | {plain_gap:>15s} | {exact.relative_gap:15.1e}")
        rows.append(f"| {name} | {'C' if kind == 'confidence' else 'B'} | {default.relative_gap:.1e} | "
                    f"{default.characteristic_time:.6f} | {elapsed:.2f} | {plain_gap} | {exact.relative_gap:.1e} |")
        if name == SMALL_GAMMA and kind == "confidence":
            small_gamma = {"plain": plain, "oracle": default}
    oracle, plain = small_gamma["oracle"], small_gamma["plain"]
    low, high = oracle.characteristic_time_bounds
    check = (f"On the tiny-$\\Gamma^*$ Bernoulli instance the plain model (unscaled, uncentred, CVXPY defaults) "
             f"returns $T^* = {plain.characteristic_time:.2f}$" if plain is not None else
             "On the tiny-$\\Gamma^*$ Bernoulli instance the plain model (unscaled, uncentred, CVXPY defaults) fails")
    check += (f"; the oracle returns ${oracle.characteristic_time:.4f}$ with the certified interval "
              f"$[{low:.5f}, {high:.5f}]$ (relative width ${(high - low) / low:.1e}$).")
    print(check)
    if args.write_docs:
        write_docs_section(DOCS, "topk-oracle-accuracy", run, [*rows, "", check])
        print(f"wrote its section of {DOCS}")


if __name__ == "__main__":
    main()
