"""Example 1 of Wang, Yang, You (2022), end to end.

Gaussian arms theta = (0.51, 0.5, 0, -0.01, -0.092), variance 1/4, k = 2. The paper reports
psi* ~ (0.2185, 0.2371, 0.2185, 0.2026, 0.1232), Gamma* = C_13 = C_24 = C_25 ~ 0.0568 and a binding graph with two
components, {1,3} and {2,4,5}, each balancing its sum of squared allocations. This script solves the problem
with every method, certifies the answers and checks those statements.

Run: python examples/topk_example_1.py
"""

import numpy as np

from allocopt import TopKProblem, check_topk, solve_topk
from allocopt.testing import get_instance
from allocopt.topk import TOPK_METHODS

instance = get_instance("topk-example-1")
parameters = instance.parameters
problem = TopKProblem(parameters["theta"], parameters["k"], family=parameters["family"],
                      variance=parameters["variance"])
print(f"{instance.source}\n{problem}\n")
print(f"{'method':14s} {'psi':52s} {'Gamma(psi)':>12s} {'certified gap':>14s} {'status':>16s} {'time [s]':>9s}")
results = {}
for method in TOPK_METHODS:
    result = solve_topk(problem, method=method)
    results[method] = result
    print(f"{method:14s} {np.array2string(result.psi, precision=5):52s} {result.value:12.8f} "
          f"{result.gap:14.3e} {result.status:>16s} {result.time:9.3f}")
print(f"paper          {str(instance.expected['psi']):52s} {instance.expected['value']:12.4f}\n")

best = results["cvxpy"]
report = check_topk(problem, best.psi)
print(report.summary())
print(f"\ncomponents, 1-based as in the paper: {report.component_indices(one_based=True)}")
psi = best.psi
print(f"psi_1^2 = {psi[0]**2:.8f}   psi_3^2 = {psi[2]**2:.8f}")
print(f"psi_2^2 = {psi[1]**2:.8f}   psi_4^2 + psi_5^2 = {psi[3]**2 + psi[4]**2:.8f}")
print(f"T* = 1/Gamma* = {best.characteristic_time:.8f}, certified interval {best.characteristic_time_bounds}")
