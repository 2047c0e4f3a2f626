"""Example 1 of Wang, Yang, You (2022), end to end.

Gaussian arms theta = (0.51, 0.5, 0, -0.01, -0.092), variance 1/4, k = 2. The paper reports
psi* ~ (0.2185, 0.2371, 0.2185, 0.2026, 0.1232), Gamma* = C_13 = C_24 = C_25 ~ 0.0568 and a binding graph with two
components, {1,3} and {2,4,5}, each balancing its sum of squared allocations. This script solves the problem
with every method, certifies the answers and checks those statements with ``check_topk`` on every method's
allocation, at a tolerance matched to the method's accuracy (docs/topk.md: about 1e-4 for the interior-point
oracle, 1e-3 for the iterative methods); its balance residuals are the relative imbalances of the sums of
squares. With ``--write-docs`` the table goes into its section of docs/topk.md, with the date, machine and load.

Run: python examples/topk_example_1.py [--write-docs]
"""

import argparse
from pathlib import Path

import numpy as np

from allocopt import TopKProblem, check_topk, solve_topk
from allocopt._scripts import MeasuredRun, write_docs_section
from allocopt.testing import get_instance
from allocopt.topk import TOPK_METHODS

DOCS = Path(__file__).resolve().parent.parent / "docs" / "topk.md"
CHECK_TOL = {"exact": 1e-6, "cvxpy": 1e-4, "fwga": 1e-3, "kkt-tracking": 1e-3}

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--write-docs", action="store_true", help="write the table into docs/topk.md")
args = parser.parse_args()
run = MeasuredRun.start()
instance = get_instance("topk-example-1")
problem = TopKProblem(**instance.parameters)
print(f"{instance.source}\n{problem}\n")
print(f"{'method':14s} {'psi':52s} {'Gamma(psi)':>12s} {'certified gap':>14s} {'status':>16s} {'time [s]':>9s}")
rows = ["| method | $\\Gamma(\\psi)$ | certified gap | certified rel. gap | status | time [s] | check tol | components "
        "(1-based) | balance residuals |", "|---|---|---|---|---|---|---|---|---|"]
results = {}
for method in TOPK_METHODS:
    result = solve_topk(problem, method=method)
    results[method] = result
    report = check_topk(problem, result.psi, tol=CHECK_TOL.get(method, 1e-3), mu=result.mu)
    residuals = ", ".join(f"{component.balance_residual:.1e}" for component in report.components)
    print(f"{method:14s} {np.array2string(result.psi, precision=5):52s} {result.value:12.8f} "
          f"{result.gap:14.3e} {result.status:>16s} {result.time:9.3f}   balance residuals {residuals}")
    rows.append(f"| `{method}` | {result.value:.10f} | {result.gap:.1e} | {result.relative_gap:.1e} | {result.status} "
                f"| {result.time:.3f} | {report.tol:g} | {report.component_indices(one_based=True)} | {residuals} |")
print(f"paper          {str(instance.expected['psi']):52s} {instance.expected['value']:12.4f}\n")

best = results["exact"]
report = check_topk(problem, best.psi, mu=best.mu)
print(report.summary())
print(f"\ncomponents, 1-based as in the paper: {report.component_indices(one_based=True)}")
psi = best.psi
print(f"psi_1^2 = {psi[0]**2:.8f}   psi_3^2 = {psi[2]**2:.8f}")
print(f"psi_2^2 = {psi[1]**2:.8f}   psi_4^2 + psi_5^2 = {psi[3]**2 + psi[4]**2:.8f}")
print(f"T* = 1/Gamma* = {best.characteristic_time:.8f}, certified interval {best.characteristic_time_bounds}")
if args.write_docs:
    write_docs_section(DOCS, "topk-example-1", run, rows)
    print(f"wrote its section of {DOCS}")
