"""Accuracy of the CVXPY oracle: scaled and centred model (allocopt's default) against a plain model.

For each instance prints the certified relative gap of the default oracle and T* = 1/Gamma(psi), next to the
same CVXPY model without allocopt's scaling (T_0 and per-arm scales, tight Clarabel tolerances, rescaling).
The certified gaps come from the shared certifier (weak duality), not from the solver's report.

Run: python benchmarks/topk_oracle.py
"""

import time
import warnings

import numpy as np

from allocopt import TopKProblem, solve_topk

warnings.simplefilter("ignore")
rng = np.random.default_rng(1)
INSTANCES = {
    "Example 1 (gaussian, K=5)": TopKProblem([0.51, 0.5, 0, -0.01, -0.092], 2, variance=0.25),
    "bernoulli, tiny Gamma*": TopKProblem([0.3, 0.21, 0.2, 0.19, 0.18], 2, family="bernoulli"),
    "Figure 3 bernoulli (K=10, ties)": TopKProblem((0.8, 0.6, 0.6, 0.4, 0.4, 0.4, 0.2, 0.2, 0.2, 0.2), 3,
                                                   family="bernoulli"),
    "poisson K=5": TopKProblem([3, 2.1, 2, 1.9, 1.8], 2, family="poisson"),
    "exponential K=5": TopKProblem([3, 2.1, 2, 1.9, 1.8], 2, family="exponential"),
    "heteroscedastic gaussian K=6": TopKProblem([1, .8, .5, .4, .1, 0], 3, variance=[1, .2, .5, 2, 1, .3]),
    "gaussian linspace K=50, k=25": TopKProblem(np.linspace(1, 0, 50), 25, variance=0.25),
    "bernoulli linspace K=50, k=25": TopKProblem(np.linspace(0.9, 0.1, 50), 25, family="bernoulli"),
    "bernoulli within 1e-6 of 0 and 1": TopKProblem([1 - 1e-6, 0.999, 0.5, 2e-6, 1e-6], 2, family="bernoulli"),
    "poisson k=1, near tie, spread psi": TopKProblem(rng.random(8), 1, family="poisson"),
}
print(f"{'instance':36s} {'kind':10s} | {'default: rel. gap':>17s} {'T*':>16s} {'time':>6s} | "
      f"{'plain: rel. gap':>15s} {'T*':>16s}")
for name, problem in INSTANCES.items():
    for kind in ("confidence", "budget"):
        started = time.perf_counter()
        default = solve_topk(problem, method="cvxpy", kind=kind)
        elapsed = time.perf_counter() - started
        try:
            plain = solve_topk(problem, method="cvxpy", kind=kind, scale=False)
            plain_text = f"{plain.relative_gap:15.1e} {plain.characteristic_time:16.6f}"
        except Exception as error:  # the plain model sometimes fails outright
            plain_text = f"{'failed':>15s} {type(error).__name__:>16s}"
        print(f"{name:36s} {kind:10s} | {default.relative_gap:17.1e} {default.characteristic_time:16.6f} "
              f"{elapsed:6.2f} | {plain_text}")
