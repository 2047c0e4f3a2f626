"""Accuracy of the paper's iterative solvers, FWGA (Algorithm 1) and KKT-Tracking (Algorithm 3).

1. FWGA's step constant c (``step_scale``; the schedule is tau_t = c N^{3/2} / t): the true relative gap
   (Gamma* - Gamma(psi)) / Gamma* after ``--iterations`` iterations (default 10^4) for several c and for
   allocopt's default c = K^2 Gamma(psi_unif) / 2, on four instances. Gamma* is the exact solver's value,
   certified to about 1e-14 relative.
2. The default methods on Example 1: the largest entry of |psi - psi*| and the relative gaps (certified and
   true) of FWGA (20000 iterations) and KKT-Tracking (10^4 iterations), against the exact psi*.

With ``--write-docs`` the tables go into their section of docs/topk.md, with the date, the machine and the load.

Run: python benchmarks/topk_iterative.py [--iterations 10000] [--write-docs]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from allocopt import TopKProblem, solve_topk
from allocopt._scripts import MeasuredRun, progress_iter, write_docs_section
from allocopt.testing import get_instance

DOCS = Path(__file__).resolve().parent.parent / "docs" / "topk.md"
STEP_SCALES = (0.003, 0.03, 0.1, 0.3, 1.0, 10.0)


def reference(name: str) -> TopKProblem:
    return TopKProblem(**get_instance(name).parameters)


INSTANCES = {
    "Example 1": reference("topk-example-1"),
    "Figure 3 Bernoulli": reference("topk-figure-3-bernoulli"),
    "Poisson K = 5": TopKProblem([3, 2.1, 2, 1.9, 1.8], 2, family="poisson"),
    "Bernoulli, tiny Gamma*": reference("topk-small-gamma-bernoulli"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--write-docs", action="store_true", help="write the tables into docs/topk.md")
    args = parser.parse_args()
    run = MeasuredRun.start()

    header = " | ".join(f"$c$ = {c:g}" for c in STEP_SCALES)
    lines = [f"FWGA: true relative gap after {args.iterations} iterations, for several step constants $c$ "
             f"(`step_scale=`) and allocopt's default $c = K^2\\Gamma(\\psi_{{\\mathrm{{unif}}}})/2$:", "",
             f"| instance | {header} | default $c$ | gap at the default |",
             "|---|" + "---|" * (len(STEP_SCALES) + 2)]
    print(f"FWGA, {args.iterations} iterations: true relative gap for c in {STEP_SCALES} and the default c")
    for name, problem in progress_iter(INSTANCES.items(), total=len(INSTANCES), desc="FWGA step constants"):
        optimum = solve_topk(problem).value
        uniform = np.full(problem.n_arms, 1.0 / problem.n_arms)
        default_c = 0.5 * problem.n_arms**2 * problem.value(uniform)
        gaps = [(optimum - solve_topk(problem, method="fwga", iterations=args.iterations, step_scale=c).value)
                / optimum for c in (*STEP_SCALES, default_c)]
        print(f"  {name:24s} " + " ".join(f"{gap:8.1e}" for gap in gaps) + f"   (default c = {default_c:.2g})")
        lines.append(f"| {name} | " + " | ".join(f"{gap:.0e}" for gap in gaps[:-1])
                     + f" | {default_c:.2g} | {gaps[-1]:.0e} |")

    problem = INSTANCES["Example 1"]
    exact = solve_topk(problem)
    lines += ["", "The default methods on Example 1, against the exact $\\psi^*$:", "",
              "| method | iterations | $\\max_a\\lvert\\psi_a - \\psi_a^*\\rvert$ | certified rel. gap | "
              "true rel. gap |", "|---|---|---|---|---|"]
    for method in ("fwga", "kkt-tracking"):
        result = solve_topk(problem, method=method)
        distance = float(np.max(np.abs(result.psi - exact.psi)))
        true_gap = (exact.value - result.value) / exact.value
        print(f"{method:13s} {result.iterations} iterations: max |psi - psi*| = {distance:.1e}, certified relative "
              f"gap {result.relative_gap:.1e}, true {true_gap:.1e}")
        lines.append(f"| `{method}` | {result.iterations} | {distance:.1e} | {result.relative_gap:.1e} | "
                     f"{true_gap:.1e} |")
    if args.write_docs:
        write_docs_section(DOCS, "topk-iterative-accuracy", run, lines)
        print(f"wrote its section of {DOCS}")


if __name__ == "__main__":
    main()
