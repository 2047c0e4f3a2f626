"""Section 5.1 of Jiang, Li, Qiao (2017): samples against N for the LUCB family.

Gaussian rewards of variance 1/4, required confidence nu = 0.01; "1-sparse" and "0.3-Exponential" instances
(``allocopt.testing.bandit_instances``) with K = 2 and K = N/2. Rules: LUCB (Kalyanakrishnan et al. 2012, with
their rate log(5 K t^4/(4 delta)); the paper runs it only in its faithful form), lil'LUCB, LUCB++, lil'RandLUCB
(Algorithm 1) and lil'CLUCB (Algorithm 2), each in its faithful (eps = 0.01, delta from Theorems 3.1/4.1) and
heuristic (eps = 0, delta = nu) versions. The paper goes up to thousands of arms; the defaults here stop at
N = 64 with 20 runs per point (``--arms``, ``--runs``).

Writes ``docs/images/lil_lucb_experiments.png`` and ``docs/lil_lucb_experiments.md`` (the table, with date,
machine and load): mean number of samples with its standard error, the number of wrong answers, and
H = sum_i Delta_i^-2 (``allocopt.complexity.h1``) and the LIL sum of Theorems 3.1 and 4.1
(``allocopt.complexity.lil_sample_complexity``) beside it; then, for each panel at the largest N, the paper's
statement next to the measured ordering of the rules (mean samples with 95% intervals) and the paired differences
lil'RandLUCB minus each other rule (the rules read the same rewards, common random numbers) with 95% intervals.

Usage: ``python examples/lil_lucb_experiments.py [--arms 4,8,16,32,64] [--runs 20] [--jobs 1]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from allocopt import TopKProblem
from allocopt._scripts import MeasuredRun, progress_on_terminal
from allocopt.algorithms import LUCB, LilCLUCB, LilLUCB, LilRandLUCB, LUCBPlusPlus, identify
from allocopt.complexity import h1, lil_sample_complexity
from allocopt.simulate import binomial_confidence_interval, paired_mean_difference
from allocopt.testing.bandit_instances import alpha_exponential, one_sparse

ROOT = Path(__file__).resolve().parent.parent
NU = 0.01
# Jiang, Li, Qiao (2017), Section 5.1, Results
PAPER = {"K=2": "lil'RandLUCB draws significantly fewer samples than the other four algorithms, especially with many arms",
         "K=N/2": "lil'RandLUCB outperforms LUCB and lil'CLUCB and performs like LUCB++ (which coincides with lil'LUCB "
                  "when K = N/2)"}
INSTANCES = {"1-sparse": one_sparse, "0.3-exponential": lambda n, k: alpha_exponential(n, k, 0.3)}
LIL_RULES = {"lil'LUCB": LilLUCB, "LUCB++": LUCBPlusPlus, "lil'RandLUCB": LilRandLUCB, "lil'CLUCB": LilCLUCB}
COLORS = {"LUCB": "C0", "lil'LUCB": "C1", "LUCB++": "C2", "lil'RandLUCB": "C3", "lil'CLUCB": "C4"}


def rules(version: str) -> dict:
    chosen = {label: factory(version=version) for label, factory in LIL_RULES.items()}
    if version == "faithful":
        chosen = {"LUCB": LUCB(exploration="kalyanakrishnan"), **chosen}
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", default="4,8,16,32,64", help="comma-separated N (even)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--output", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    arms = [int(value) for value in args.arms.split(",")]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, samples = [], {}
    run = MeasuredRun.start()
    fig, axes = plt.subplots(2, 4, figsize=(18, 8), sharex=True)
    panels = [(instance, k_label, version) for instance in INSTANCES for k_label in ("K=2", "K=N/2")
              for version in ("faithful", "heuristic")]
    for position, (instance, k_label, version) in enumerate(panels):
        ax = axes[position // 4, position % 4]
        for label, rule in rules(version).items():
            means, errors = [], []
            for n_arms in arms:
                k = 2 if k_label == "K=2" else n_arms // 2
                theta = INSTANCES[instance](n_arms, k)
                problem = TopKProblem(theta, k, variance=0.25)
                result = identify(problem, rule, delta=NU, n_runs=args.runs, rng=2017, n_jobs=args.jobs,
                                  max_samples=10**7, progress=progress_on_terminal())
                times = result.stopping_times[:, 0]
                samples[(instance, k_label, version, label, n_arms)] = times
                wrong = int((~result.correct[:, 0]).sum())
                means.append(times.mean())
                errors.append(times.std(ddof=1) / np.sqrt(args.runs))
                rows.append((instance, k_label, version, label, n_arms, k, float(h1(theta, k)), times.mean(),
                             errors[-1], wrong, int((~result.stopped[:, 0]).sum()), result.time,
                             float(lil_sample_complexity(theta, k, NU))))
                print(f"{instance}, {k_label}, {version}, {label}, N = {n_arms}: mean samples {times.mean():.1f} "
                      f"+- {errors[-1]:.1f}, H = {rows[-1][6]:.4g}, LIL sum = {rows[-1][12]:.4g}, wrong {wrong}, capped {rows[-1][10]} "
                      f"({result.time:.1f} s)")
            ax.errorbar(arms, means, yerr=1.96 * np.array(errors), fmt="o-", ms=3, capsize=2, label=label,
                        color=COLORS[label])
        ax.set_title(f"({version}) {instance}, {k_label}", fontsize=10)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("N (arms)")
        ax.set_ylabel("samples (mean, 95% error bars)")
        ax.legend(fontsize=7)
    fig.suptitle(f"Jiang, Li, Qiao (2017), Section 5.1, N up to {arms[-1]}: gaussian, variance 1/4, nu = {NU}, "
                 f"{args.runs} runs per point")
    fig.tight_layout()
    images = args.output / "images"
    images.mkdir(parents=True, exist_ok=True)
    fig.savefig(images / "lil_lucb_experiments.png", dpi=110)

    total_wrong = sum(row[9] for row in rows)
    total_runs = len(rows) * args.runs
    wrong_low, wrong_high = binomial_confidence_interval(total_wrong, total_runs)
    lines = [f"# Best-K experiments of Jiang, Li, Qiao (2017), Section 5.1, N up to {arms[-1]}", "",
             run.provenance(), "",
             f"Gaussian rewards of variance 1/4, nu = {NU}, N in {arms}, {args.runs} runs per point (the paper goes "
             "to thousands of arms). Faithful versions: eps = 0.01 and delta from Theorem 3.1 (lil'RandLUCB, LUCB++) "
             "or 4.1 (lil'CLUCB, lil'LUCB); heuristic versions: eps = 0, delta = nu. LUCB uses the rate "
             "log(5 K t^4/(4 delta)) of Kalyanakrishnan et al. (2012).", "",
             f"Wrong answers: {total_wrong} of {total_runs} runs, an error rate with 95% Clopper-Pearson interval "
             f"[{wrong_low:.2g}, {wrong_high:.2g}] (the paper reports none).", "",
             "![Samples against N](images/lil_lucb_experiments.png)", "",
             "The LIL sum is sum_i Delta_i^-2 (log 1/nu + log N + log log max(1/Delta_i, e)), the sum in the sample "
             "complexity of Theorems 3.1 and 4.1 (`allocopt.complexity.lil_sample_complexity`; the theorems bound "
             "the samples by an unstated constant times it).", "",
             "| instance | K | version | rule | N | H = sum Delta^-2 | LIL sum | mean samples | s.e. | samples / H | "
             "samples / LIL sum | wrong | capped | time (s) |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for instance, k_label, version, label, n_arms, k, hardness, mean, error, wrong, capped, seconds, lil in rows:
        lines.append(f"| {instance} | {k} | {version} | {label} | {n_arms} | {hardness:.1f} | {lil:.4g} | {mean:.0f} | "
                     f"{error:.0f} | {mean / hardness:.1f} | {mean / lil:.2f} | {wrong} | {capped} | {seconds:.1f} |")
    largest = arms[-1]
    lines += ["", f"## The paper's statements and the measured ordering at N = {largest}", "",
              "Mean samples with a 95% interval (1.96 standard errors), smallest first; then lil'RandLUCB minus each "
              "other rule, paired run by run ('fewer' when the whole 95% interval is below 0, 'more' when above, "
              "else 'level').", ""]
    for instance, k_label, version in panels:
        labels = list(rules(version))
        runs = {label: samples[(instance, k_label, version, label, largest)].astype(float) for label in labels}
        order = sorted(labels, key=lambda label: runs[label].mean())
        ranking = ", ".join(f"{label} {runs[label].mean():.0f} +- {1.96 * runs[label].std(ddof=1) / np.sqrt(args.runs):.0f}"
                            for label in order)
        lines.append(f"* {instance}, {k_label}, {version}. Paper: {PAPER[k_label]}. Measured: {ranking}.")
        differences = []
        for label in labels:
            if label == "lil'RandLUCB":
                continue
            paired = paired_mean_difference(runs["lil'RandLUCB"], runs[label])
            low, high = paired.interval()
            verdict = "fewer" if high < 0 else "more" if low > 0 else "level"
            differences.append(f"- {label}: {paired.mean:+.0f} [{low:+.0f}, {high:+.0f}] {verdict}")
        lines.append("  lil'RandLUCB " + "; ".join(differences) + ".")
    (args.output / "lil_lucb_experiments.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
