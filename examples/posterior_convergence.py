"""Posterior convergence of Wang, Yang, You (2022, Appendix D, Figures 10-12) for best-arm identification.

The first number of pulls at which the posterior probability that the true best arm is the best reaches
c in {0.9, 0.99, 0.999}, for KKT-TS, TTTS, TTEI, T3C (beta = 1/2) and uniform sampling; Gaussian arms with a
flat prior and Bernoulli arms with Beta(1, 1) priors. The instances of the paper's Figures 10-11 are not in its
text; these two have five arms each:

* Gaussian theta = (1, 0.8, 0.6, 0.4, 0.2), variance 1/4 (TTEI is defined for Gaussian arms only);
* Bernoulli theta = (0.8, 0.6, 0.5, 0.4, 0.2).

The third panel (Figure 12) plots sample paths of the posterior probability of error 1 - P_n of KKT-TS against
exp(-Gamma* n).

Writes ``docs/images/posterior_convergence.png`` and ``docs/posterior_convergence.md`` (the tables, with date,
machine and load). Sizes default to a run of a few minutes on a shared 2-core machine.

Usage: ``python examples/posterior_convergence.py [--runs 200] [--bernoulli-runs 100] [--paths 5]
[--horizon 3000] [--jobs 2]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from allocopt import TopKProblem
from allocopt._scripts import MeasuredRun, progress_on_terminal
from allocopt.algorithms import posterior_convergence, posterior_error_paths

ROOT = Path(__file__).resolve().parent.parent
LEVELS = (0.9, 0.99, 0.999)
RULES = ("kkt-ts", "ttts", "ttei", "t3c", "uniform")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="runs per rule, Gaussian instance")
    parser.add_argument("--bernoulli-runs", type=int, default=100, help="runs per rule, Bernoulli instance")
    parser.add_argument("--paths", type=int, default=5, help="sample paths of KKT-TS in the third panel")
    parser.add_argument("--horizon", type=int, default=3000, help="length of the sample paths")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--output", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    run = MeasuredRun.start()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    instances = {
        "gaussian": (TopKProblem([1.0, 0.8, 0.6, 0.4, 0.2], k=1, variance=0.25), args.runs),
        "bernoulli": (TopKProblem([0.8, 0.6, 0.5, 0.4, 0.2], k=1, family="bernoulli"), args.bernoulli_runs),
    }
    results = {}
    for family, (problem, runs) in instances.items():
        for rule in RULES:
            if rule == "ttei" and family != "gaussian":
                continue
            result = posterior_convergence(problem, rule, LEVELS, n_runs=runs, rng=2022, n_jobs=args.jobs,
                                           progress=progress_on_terminal())
            results[family, rule] = result
            print(family, rule, f"{result.time:.0f} s",
                  [f"{row.mean_time:.0f} +- {row.standard_error:.0f}" for row in result.summary()], flush=True)
    paths = posterior_error_paths(instances["gaussian"][0], "kkt-ts", args.horizon, n_paths=args.paths, rng=12)

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.4))
    for ax, family in zip(axes[:2], instances):
        rules = [rule for rule in RULES if (family, rule) in results]
        for offset, rule in enumerate(rules):
            rows = results[family, rule].summary()
            x = np.arange(len(LEVELS)) + (offset - len(rules) / 2) * 0.08
            ax.errorbar(x, [row.mean_time for row in rows], yerr=[1.96 * row.standard_error for row in rows],
                        fmt="o-", capsize=3, label=rule)
        ax.set_xticks(np.arange(len(LEVELS)), [str(level) for level in LEVELS])
        ax.set_xlabel("level c")
        ax.set_ylabel("first n with P_n > c (mean, 95% error bars)")
        ax.set_title(f"{family}, {instances[family][1]} runs per rule")
        ax.legend(fontsize=8)
    ax = axes[2]
    for path in paths.error:
        ax.semilogy(paths.samples, path, lw=0.8)
    ax.semilogy(paths.samples, np.exp(-paths.gamma_star * paths.samples), "k--", lw=2, label="exp(-Gamma* n)")
    ax.set_xlabel("n")
    ax.set_ylabel("posterior probability of error 1 - P_n")
    ax.set_title(f"KKT-TS, gaussian instance, {args.paths} sample paths")
    ax.legend(fontsize=8)
    fig.suptitle("Posterior convergence for best-arm identification (Wang, Yang, You 2022, Appendix D)")
    fig.tight_layout()
    images = args.output / "images"
    images.mkdir(parents=True, exist_ok=True)
    fig.savefig(images / "posterior_convergence.png", dpi=110)

    # the slope of log(1 - P_n) over the second half of the paths, against -Gamma*
    half = paths.samples >= args.horizon // 2
    slopes = []
    for path in paths.error:
        finite = half & (path > 0)
        if finite.sum() > 10:
            slopes.append(np.polyfit(paths.samples[finite], np.log(path[finite]), 1)[0])
    lines = ["# Posterior convergence (Wang, Yang, You 2022, Appendix D, Figures 10-12)", "",
             run.provenance(),
             "", "Instances (the paper's are not in its text): Gaussian theta = (1, 0.8, 0.6, 0.4, 0.2), variance "
             "1/4, flat prior; Bernoulli theta = (0.8, 0.6, 0.5, 0.4, 0.2), Beta(1, 1) priors; k = 1. Every run pulls "
             "each arm once first. Top-two rules with beta = 1/2. P_n is the posterior probability of the true best "
             "arm, by quadrature (`allocopt.algorithms.posterior_error_probability`).", "",
             "![Figure](images/posterior_convergence.png)", "",
             "| instance | rule | runs | c | mean first n | s.e. | reached | time (s) |", "|---|---|---|---|---|---|---|---|"]
    for (family, rule), result in results.items():
        for row in result.summary():
            lines.append(f"| {family} | {rule} | {result.n_runs} | {row.level} | {row.mean_time:.1f} | "
                         f"{row.standard_error:.1f} | {row.reached_fraction:.3f} | {result.time:.0f} |")
    lines += ["", f"Sample paths (third panel): KKT-TS on the Gaussian instance, {args.paths} runs up to n = "
              f"{args.horizon}; Gamma* = {paths.gamma_star:.5f} (exact solver). Least-squares slope of "
              f"log(1 - P_n) over n >= {args.horizon // 2}: "
              + ", ".join(f"{slope:.5f}" for slope in slopes) + f" (against -Gamma* = {-paths.gamma_star:.5f})."]
    (args.output / "posterior_convergence.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
