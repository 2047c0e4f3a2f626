"""How close to the infimum are the basis gaps of ``cbmai_hardness``? Prints observed discrepancies; asserts nothing.

For each of D1P, D2P, D3P (sigma_r = 1, sigma_c = 0.5):

1. default settings against a lattice twice as fine with 8 pattern-search starts: the largest relative
   decrease of any basis gap (a decrease would mean the default missed a better basin);
2. every witness (the perturbation attaining a gap) is re-checked with numpy: I* and J feasible, J's value
   at least I*'s, at the stated distance (largest violation printed);
3. an independent method on ``--sample`` bases (those attaining the ten smallest positive arm gaps, which
   set the exponents, and random others): SLSQP on (9) written directly in the perturbed means, from
   ``--starts`` random starts; printed is the smallest ratio (direct / computed), which is >= 1 when the
   direct search never finds a lower value.

Usage: ``python benchmarks/cbmai_hardness_accuracy.py [--sample 25] [--starts 20] [--write-docs]``;
``--write-docs`` writes the table into its section of docs/cbmai.md, with the date, the machine and the load.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import allocopt
from allocopt._scripts import MeasuredRun, progress_iter, write_docs_section
from allocopt.testing.cbmai import direct_gap_search, gap_constraint_violation

INSTANCES = ("cbmai-d1p", "cbmai-d2p", "cbmai-d3p")
SIGMA_R, SIGMA_C = 1.0, 0.5
DOCS = Path(__file__).resolve().parent.parent / "docs" / "cbmai.md"


def witness_violation(problem, hardness, basis):
    rewards, costs = hardness.witness(basis)
    distance = np.sum((rewards - problem.rewards) ** 2) / SIGMA_R**2 + np.sum((costs - problem.costs) ** 2) / SIGMA_C**2
    violation = gap_constraint_violation(problem, hardness.optimal_support, basis, rewards, costs)
    if violation is None:
        return None
    return max(violation, abs(distance - hardness.basis_gap(basis)) / hardness.basis_gap(basis))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=25, help="bases per instance for the direct search")
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/cbmai.md")
    parser.add_argument("--docs", type=Path, default=DOCS, help=argparse.SUPPRESS)  # another copy of the page
    args = parser.parse_args()
    run = MeasuredRun.start()
    rng = np.random.default_rng(0)
    rows = []
    for name in progress_iter(INSTANCES, desc="instances"):
        problem = allocopt.CBMAIProblem.from_reference(name)
        default = allocopt.cbmai_hardness(problem, SIGMA_R, SIGMA_C)
        start = time.perf_counter()
        fine = allocopt.cbmai_hardness(problem, SIGMA_R, SIGMA_C, resolution=2 * default.resolution, n_starts=8)
        fine_seconds = time.perf_counter() - start
        finite = np.isfinite(default.basis_gaps) & (default.basis_gaps > 0)
        decrease = np.max((default.basis_gaps[finite] - fine.basis_gaps[finite]) / default.basis_gaps[finite])
        violations = [witness_violation(problem, default, basis) for basis in default.bases[finite]]
        checked = [v for v in violations if v is not None]
        # the bases that attain the ten smallest positive arm gaps (they set the exponents), plus random ones
        decisive = []
        for column in default.sorted_arms[problem.n_costs + 1:problem.n_costs + 11]:
            containing = np.flatnonzero(np.any(default.bases == column, axis=1))
            decisive.append(int(containing[np.argmin(default.basis_gaps[containing])]))
        others = np.setdiff1d(np.flatnonzero(finite), decisive)
        sample = np.concatenate([np.unique(decisive),
                                 rng.choice(others, size=max(0, args.sample - len(set(decisive))), replace=False)])
        start = time.perf_counter()
        ratios = [direct_gap_search(problem, default.optimal_support, default.bases[row], SIGMA_R, SIGMA_C,
                                    args.starts, rng) / default.basis_gaps[row] for row in sample]
        direct_seconds = time.perf_counter() - start
        rows.append([name[-3:].upper(), f"{int(finite.sum())}",
                     f"{default.resolution} ({default.time:.1f} s) / {fine.resolution} ({fine_seconds:.1f} s)",
                     f"{max(decrease, 0.0):.1e}", f"{len(checked)} of {len(violations)}", f"{max(checked):.1e}",
                     f"{len(sample)} ({direct_seconds:.0f} s)", f"{np.min(ratios):.6f}",
                     f"{int(np.sum(np.isinf(ratios)))}"])
    lines = ["| instance | finite positive gaps | lattice (time): default / twice as fine, 8 starts | largest relative "
             "decrease | witnesses re-checked | largest violation | bases searched directly (time) | smallest ratio "
             "direct / computed | direct search found nothing feasible |",
             "|" + "---|" * 9, *["| " + " | ".join(row) + " |" for row in rows], "",
             f"The direct search ran SLSQP from {args.starts} random starts per basis."]
    print("\n".join(lines))
    if args.write_docs:
        write_docs_section(args.docs, "cbmai-hardness-accuracy", run, lines)
        print(f"wrote its section of {args.docs}")


if __name__ == "__main__":
    main()
