"""Figure 3 of Wang, Yang, You (2022): convergence of FWGA and KKT-Tracking.

Left: Example 1 (Gaussian, theta = (0.51, 0.5, 0, -0.01, -0.092), variance 1/4, k = 2). Right: the Bernoulli bandit
of the paper's Section D with theta_1 = 0.8, theta_2:3 = 0.6, theta_4:6 = 0.4, theta_7:10 = 0.2 and k = 3. The
curves are the optimality gaps the solvers record at every iteration (certified, solid; true, dashed, against
the exact solver's Gamma*, itself certified to about 1e-14 relative), so nothing is recomputed for the plot.
With ``--write-docs`` the final gaps go into their section of docs/topk.md, with the date, machine and load.

Run: python examples/topk_convergence.py [--write-docs]   (writes examples/output/topk_convergence.png)
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from allocopt import TopKProblem, solve_topk
from allocopt._scripts import MeasuredRun, progress_iter, write_docs_section
from allocopt.testing import get_instance
from allocopt.topk.plotting import plot_convergence

ITERATIONS = 20_000
DOCS = Path(__file__).resolve().parent.parent / "docs" / "topk.md"

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--write-docs", action="store_true", help="write the final gaps into docs/topk.md")
args = parser.parse_args()
run = MeasuredRun.start()
output = Path(__file__).parent / "output"
output.mkdir(exist_ok=True)
figure, axes = plt.subplots(1, 2, figsize=(12, 4.5))
rows = [f"| instance | method | certified rel. gap after {ITERATIONS} iterations | true rel. gap |", "|---|---|---|---|"]
titles = {"topk-example-1": "Example 1", "topk-figure-3-bernoulli": "Figure 3 Bernoulli"}
for ax, name in progress_iter(zip(axes, titles), total=len(titles), desc="Figure 3"):
    instance = get_instance(name)
    problem = TopKProblem(**instance.parameters)
    optimum = solve_topk(problem).value
    results = {method: solve_topk(problem, method=method, iterations=ITERATIONS) for method in ("fwga", "kkt-tracking")}
    plot_convergence(results, ax=ax, optimum=optimum)
    ax.set_title(f"{problem.family.name}, K = {problem.n_arms}, k = {problem.k}")
    for method, result in results.items():
        certified, true = result.history.relative_gap[-1], (optimum - result.value) / optimum
        print(f"{name:26s} {method:13s} relative gap after {ITERATIONS} iterations: certified {certified:.2e}, "
              f"true {true:.2e}")
        rows.append(f"| {titles[name]} | `{method}` | {certified:.1e} | {true:.1e} |")
figure.tight_layout()
path = output / "topk_convergence.png"
figure.savefig(path, dpi=120)
print(f"saved {path}")
if args.write_docs:
    write_docs_section(DOCS, "topk-figure-3", run, rows)
    print(f"wrote its section of {DOCS}")
