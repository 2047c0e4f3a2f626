"""TTTS and UGapE as their seeds define them, beside the readings allocopt ran before (issue 31).

Three measurements, each a section of ``docs/faithful_rules.md`` with ``--write-docs``:

``ttts``
    Wang, Yang, You (2022)'s Figure 1 instance with k = 1 (Gaussian theta_i = 1 - (i-1)/20, i = 1..20, variance 1/4)
    at delta = 0.01: TTTS as Russo (2016) defines it (re-sampling until the arg max changes; allocopt's default,
    safety cap 10^6), the capped TTTS of earlier versions (8 re-samples, then T3C's challenger) and T3C, over the same
    replications (the same reward streams: paired differences). Per rule: E[tau] and its standard error, the error
    rate, the challenger steps' share that fell back on T3C's challenger and the mean re-samples per challenger step.
``ugape-bounds``
    UGapEc on Bernoulli theta = 0.9, 0.8, ..., 0.1, k = 3, delta = 0.1 (Wang, Yang, You's exploration rate
    log((log t + 1)/delta)) with the KL confidence bounds the seed prescribes (the default) and with Hoeffding's.
``ugape-stopping``
    UGapEc on Figure 1's instance (k = 5) at delta = 0.1 with its stopping rule (the confidence boxes of J_t separate:
    B_{J_t} < 0, the default) and with the literal reading of Wang, Yang, You's sentence (the smallest gap index is
    negative), beside KKT-TS with the Chernoff rule at the same exploration rate.

Usage: ``python examples/faithful_ttts_ugape.py {ttts,ugape-bounds,ugape-stopping} [--runs N] [--jobs J]
[--write-docs]``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from allocopt import TopKProblem
from allocopt._scripts import MeasuredRun, script_command, write_docs_section
from allocopt.algorithms import T3C, TTTS, UGapE, identify

PAGE = Path(__file__).resolve().parent.parent / "docs" / "faithful_rules.md"
HEADING = ("# TTTS and UGapE as their seeds define them\n\n"
           "Measured by `examples/faithful_ttts_ugape.py` (issue 31); every table below is written by that script.\n")
FIGURE_1 = 1.0 - np.arange(20) / 20.0


def _mean_and_error(values: np.ndarray) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))


def _run(problem, rule, delta, runs, jobs, seed):
    start = time.process_time()
    result = identify(problem, rule, delta=delta, n_runs=runs, rng=seed, n_jobs=jobs, max_samples=10**7)
    return result, time.process_time() - start


def ttts(runs: int, jobs: int, seed: int) -> list[str]:
    problem = TopKProblem(FIGURE_1, k=1, variance=0.25)
    delta = 0.01
    rules = {"TTTS (Russo 2016; default, cap 10^6)": TTTS(), "TTTS capped at 8 re-samples": TTTS(max_resamples=8),
             "T3C": T3C()}
    results = {label: _run(problem, rule, delta, runs, jobs, seed) for label, rule in rules.items()}
    lines = [f"Figure 1's instance with k = 1 (Gaussian theta_i = 1 - (i-1)/20, variance 1/4), delta = {delta}, "
             f"{runs} replications (seed {seed}; the same reward streams for every rule), Chernoff stopping with "
             "beta(t, delta) = log((log t + 1)/delta).", "",
             "| rule | E[tau] | s.e. | error rate | fallback share (of challenger steps) | re-samples per challenger "
             "step | CPU s |", "|---|---|---|---|---|---|---|"]
    for label, (result, cpu) in results.items():
        mean, error = _mean_and_error(result.stopping_times[:, 0])
        diagnostics = result.diagnostics
        if "challenger_steps" in diagnostics:
            steps = float(diagnostics["challenger_steps"].sum())
            share = f"{float(diagnostics['resample_fallbacks'].sum()) / steps:.4f}"
            per_step = f"{float(diagnostics['resamples'].sum()) / steps:.1f}"
        else:
            share, per_step = "(no re-sampling)", "-"
        errors = 1.0 - float(result.correct[:, 0].mean())
        lines.append(f"| {label} | {mean:.1f} | {error:.1f} | {errors:.4f} | {share} | {per_step} | {cpu:.1f} |")
    russo = results["TTTS (Russo 2016; default, cap 10^6)"][0].stopping_times[:, 0]
    lines += ["", "Paired differences of the stopping times (same replication, same rewards):", ""]
    for label in ("TTTS capped at 8 re-samples", "T3C"):
        mean, error = _mean_and_error(russo - results[label][0].stopping_times[:, 0])
        lines.append(f"- TTTS (Russo) minus {label}: {mean:+.1f} +- {error:.1f} samples "
                     f"({mean / float(results[label][0].stopping_times[:, 0].mean()):+.1%}).")
    return lines


def ugape_bounds(runs: int, jobs: int, seed: int) -> list[str]:
    problem = TopKProblem(np.arange(9, 0, -1) / 10.0, k=3, family="bernoulli")
    delta = 0.1
    lines = [f"Bernoulli theta = 0.9, 0.8, ..., 0.1, k = 3, delta = {delta}, {runs} replications (seed {seed}); "
             "exploration rate log((log t + 1)/delta); UGapEc's own stopping rule.", "",
             "| bounds | E[tau] | s.e. | error rate | CPU s |", "|---|---|---|---|---|"]
    for bounds in ("kl", "hoeffding"):
        result, cpu = _run(problem, UGapE(bounds=bounds), delta, runs, jobs, seed)
        mean, error = _mean_and_error(result.stopping_times[:, 0])
        lines.append(f"| {bounds} | {mean:.1f} | {error:.1f} | {1.0 - float(result.correct[:, 0].mean()):.4f} "
                     f"| {cpu:.1f} |")
    return lines


def ugape_stopping(runs: int, jobs: int, seed: int) -> list[str]:
    problem = TopKProblem(FIGURE_1, k=5, variance=0.25)
    delta = 0.1
    lines = [f"Figure 1's instance (Gaussian theta_i = 1 - (i-1)/20, variance 1/4, k = 5), delta = {delta}, {runs} "
             f"replications (seed {seed}); exploration rate and Chernoff threshold log((log t + 1)/delta).", "",
             "| rule | stopping | E[tau] | s.e. | error rate | 95% interval |", "|---|---|---|---|---|---|"]
    rules = (("UGapE", "boxes: B_{J_t} < 0 (default)", UGapE()),
             ("UGapE", "min-gap-index: min_a B_a < 0", UGapE(stop_on="min-gap-index")),
             ("KKT-TS", "Chernoff", "kkt-ts"))
    for label, stopping, rule in rules:
        result, _ = _run(problem, rule, delta, runs, jobs, seed)
        row = result.summary()[0]
        lines.append(f"| {label} | {stopping} | {row.mean_stopping_time:.1f} | {row.standard_error:.1f} | "
                     f"{row.error_rate:.4f} | [{row.error_low:.4f}, {row.error_high:.4f}] |")
    return lines


EXPERIMENTS = {"ttts": (ttts, "TTTS: Russo's re-sampling against the capped variant and T3C"),
               "ugape-bounds": (ugape_bounds, "UGapEc on Bernoulli arms: KL against Hoeffding bounds"),
               "ugape-stopping": (ugape_stopping, "UGapEc's stopping rule: two readings")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=sorted(EXPERIMENTS))
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=2022)
    parser.add_argument("--write-docs", action="store_true", help=f"write the section of {PAGE.name}")
    arguments = parser.parse_args()
    run = MeasuredRun.start()
    measure, title = EXPERIMENTS[arguments.experiment]
    lines = measure(arguments.runs, arguments.jobs, arguments.seed)
    print("\n".join(lines))
    if arguments.write_docs:
        if not PAGE.exists():
            PAGE.write_text(HEADING)
        write_docs_section(PAGE, arguments.experiment, run, [f"## {title}", "", *lines])
        print(f"written: {PAGE} ({script_command()})")


if __name__ == "__main__":
    main()
