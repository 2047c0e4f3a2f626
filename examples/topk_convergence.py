"""Figure 3 of Wang, Yang, You (2022): convergence of FWGA and KKT-Tracking.

Left: Example 1 (Gaussian, theta = (0.51, 0.5, 0, -0.01, -0.092), variance 1/4, k = 2). Right: the Bernoulli bandit
of the paper's Section D with theta_1 = 0.8, theta_2:3 = 0.6, theta_4:6 = 0.4, theta_7:10 = 0.2 and k = 3. The
curves are the optimality gaps the solvers record at every iteration (certified, solid; true, dashed, against
the CVXPY oracle's Gamma*), so nothing is recomputed for the plot.

Run: python examples/topk_convergence.py   (writes examples/output/topk_convergence.png)
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from allocopt import TopKProblem, solve_topk
from allocopt.testing import get_instance
from allocopt.topk.plotting import plot_convergence

ITERATIONS = 20_000
output = Path(__file__).parent / "output"
output.mkdir(exist_ok=True)
figure, axes = plt.subplots(1, 2, figsize=(12, 4.5))
for ax, name in zip(axes, ("topk-example-1", "topk-figure-3-bernoulli")):
    instance = get_instance(name)
    problem = TopKProblem(**instance.parameters)
    optimum = solve_topk(problem, method="cvxpy", tol=1e-10).value
    results = {method: solve_topk(problem, method=method, iterations=ITERATIONS) for method in ("fwga", "kkt-tracking")}
    plot_convergence(results, ax=ax, optimum=optimum)
    ax.set_title(f"{problem.family.name}, K = {problem.n_arms}, k = {problem.k}")
    for method, result in results.items():
        print(f"{name:26s} {method:13s} relative gap after {ITERATIONS} iterations: certified "
              f"{result.history.relative_gap[-1]:.2e}, true {(optimum - result.value) / optimum:.2e}")
figure.tight_layout()
path = output / "topk_convergence.png"
figure.savefig(path, dpi=120)
print(f"saved {path}")
