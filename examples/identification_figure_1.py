"""Figure 1 of Wang, Yang, You (2022) for KKT-TS, Track-and-Stop and uniform sampling.

Instance (Section 5): gaussian theta_i = 1 - (i-1)/20, i = 1..20, variance 1/4, k = 5; Chernoff stopping with
the heuristic threshold log((log t + 1)/delta); delta in {0.1, 0.01, 0.001}, all from one run per replication.
The paper uses 10^4 replications for every algorithm; here KKT-TS uses ``--runs`` (default 10^4), uniform
sampling ``--uniform-runs`` (default 2000; its runs are about seven times longer) and Track-and-Stop (exact solver
at every step, D-tracking, batched over replications with one solve_topk_batch call per step) ``--tas-runs``
(default 1000).

Writes ``docs/images/identification_figure_1.png`` (mean stopping time with 95% error bars and the realised
error rate against delta; the average allocation N/t at a large budget against psi*) and
``docs/identification_figure_1.md`` (the tables, with date and machine).

Usage: ``python examples/identification_figure_1.py [--runs 10000] [--uniform-runs 2000] [--tas-runs 1000]
[--jobs 2] [--budget 20000] [--allocation-runs 200] [--tas-budget 20000]``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
from pathlib import Path

import numpy as np

import allocopt
from allocopt import TopKProblem
from allocopt.algorithms import KKTTS, TrackAndStop, Uniform, identify, identify_fixed_budget

ROOT = Path(__file__).resolve().parent.parent
THETA = 1.0 - np.arange(20) / 20.0
DELTAS = (0.1, 0.01, 0.001)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000, help="KKT-TS replications")
    parser.add_argument("--uniform-runs", type=int, default=2000)
    parser.add_argument("--tas-runs", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--budget", type=int, default=20_000, help="budget of the allocation panel")
    parser.add_argument("--allocation-runs", type=int, default=200)
    parser.add_argument("--tas-budget", type=int, default=20_000, help="budget of Track-and-Stop's allocation")
    parser.add_argument("--output", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problem = TopKProblem(THETA, 5, variance=0.25)
    psi_star = allocopt.solve_topk(problem).psi
    experiments = [("KKT-TS", KKTTS(), args.runs), ("Track-and-Stop", TrackAndStop(), args.tas_runs),
                   ("uniform", Uniform(), args.uniform_runs)]
    results = {}
    for label, rule, runs in experiments:
        results[label] = identify(problem, rule, delta=DELTAS, n_runs=runs, rng=2022, n_jobs=args.jobs)
        print(results[label].format_summary())
    allocations = {}
    for label, rule, runs, budget in [("KKT-TS", KKTTS(), args.allocation_runs, args.budget),
                                      ("Track-and-Stop", TrackAndStop(), min(args.tas_runs, args.allocation_runs), args.tas_budget),
                                      ("uniform", Uniform(), 20, args.budget)]:
        fixed = identify_fixed_budget(problem, rule, budget, n_runs=runs, rng=7, n_jobs=args.jobs)
        allocations[label] = (fixed.pulls / fixed.pulls.sum(axis=1, keepdims=True)).mean(axis=0), runs, budget

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for offset, (label, result) in enumerate(results.items()):
        rows = result.summary()
        x = np.arange(len(DELTAS)) + (offset - 1) * 0.12
        axes[0].errorbar(x, [row.mean_stopping_time for row in rows], yerr=[1.96 * row.standard_error for row in rows],
                         fmt="o-", capsize=3, label=f"{label} ({result.n_runs} runs)")
        axes[1].errorbar(x, [row.error_rate for row in rows],
                         yerr=[[row.error_rate - row.error_low for row in rows],
                               [row.error_high - row.error_rate for row in rows]], fmt="o", capsize=3, label=label)
    lower = [row.lower_bound for row in results["KKT-TS"].summary()]
    axes[0].plot(np.arange(len(DELTAS)), lower, "k--", label="T* kl(delta, 1-delta)")
    axes[1].plot(np.arange(len(DELTAS)), DELTAS, "k:", label="delta")
    for ax in axes[:2]:
        ax.set_xticks(np.arange(len(DELTAS)), [str(d) for d in DELTAS])
        ax.set_xlabel("delta")
    axes[0].set_ylabel("mean stopping time (95% error bars)")
    axes[1].set_ylabel("realised error rate (95% Clopper-Pearson)")
    axes[1].set_yscale("symlog", linthresh=1e-3)
    axes[0].legend(fontsize=8)
    axes[1].legend(fontsize=8)
    arms = np.arange(1, 21)
    axes[2].plot(arms, psi_star, "k-", lw=2, label="psi* (exact solver)")
    for label, (allocation, runs, budget) in allocations.items():
        axes[2].plot(arms, allocation, "o--", ms=4, label=f"{label} N/t at t = {budget} ({runs} runs)")
    axes[2].set_xlabel("arm i (theta_i = 1 - (i-1)/20)")
    axes[2].set_ylabel("allocation")
    axes[2].set_yscale("log")
    axes[2].legend(fontsize=8)
    fig.suptitle("Top-5 of 20 gaussian arms (Wang, Yang, You 2022, Section 5), heuristic threshold")
    fig.tight_layout()
    images = args.output / "images"
    images.mkdir(parents=True, exist_ok=True)
    fig.savefig(images / "identification_figure_1.png", dpi=120)

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = ["# Figure 1 of Wang, Yang, You (2022): KKT-TS, Track-and-Stop and uniform sampling", "",
             f"Written by `examples/identification_figure_1.py` on {stamp}, {platform.machine()} with "
             f"{os.cpu_count()} cores (shared: load average {os.getloadavg()[0]:.1f}), allocopt {allocopt.__version__}.",
             "", "Gaussian theta_i = 1 - (i-1)/20, i = 1..20, variance 1/4, k = 5; Chernoff stopping with "
             "beta(t, delta) = log((log t + 1)/delta); every run pulls each arm once first. "
             f"T* = {results['KKT-TS'].characteristic_time:.2f} (exact solver).", "",
             "![Figure](images/identification_figure_1.png)", "",
             "| rule | runs | delta | mean stopping time | s.e. | error rate | 95% interval | T* kl(delta,1-delta) | "
             "E[tau]/(T* log 1/delta) | time (s) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for label, result in results.items():
        for row in result.summary():
            lines.append(f"| {label} | {result.n_runs} | {row.delta} | {row.mean_stopping_time:.1f} | "
                         f"{row.standard_error:.1f} | {row.error_rate:.4f} | [{row.error_low:.4f}, {row.error_high:.4f}] | "
                         f"{row.lower_bound:.1f} | {row.ratio:.3f} | {result.time:.0f} |")
    lines += ["", "Average allocation N/t against psi*:", "",
              "| arm | psi* | " + " | ".join(f"{label} (t = {budget}, {runs} runs)"
                                           for label, (_, runs, budget) in allocations.items()) + " |",
              "|---|---|" + "---|" * len(allocations)]
    for arm in range(20):
        lines.append(f"| {arm + 1} | {psi_star[arm]:.4f} | " + " | ".join(
            f"{allocation[arm]:.4f}" for allocation, _, _ in allocations.values()) + " |")
    (args.output / "identification_figure_1.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
