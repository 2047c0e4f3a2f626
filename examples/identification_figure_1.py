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
[--jobs 2] [--budget 20000] [--allocation-runs 200] [--tas-budget 20000]``; ``--replot`` redraws the figure
from the tables of an earlier run (after a change of the drawing code) without simulating.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

import numpy as np

import allocopt
from allocopt import TopKProblem
from allocopt._scripts import MeasuredRun, progress_on_terminal
from allocopt.algorithms import KKTTS, TrackAndStop, Uniform, identify, identify_fixed_budget
from allocopt.algorithms.results import IdentificationSummaryRow
from allocopt.simulate import binomial_confidence_interval

ROOT = Path(__file__).resolve().parent.parent
THETA = 1.0 - np.arange(20) / 20.0
DELTAS = (0.1, 0.01, 0.001)


RULE_NAMES = {"KKT-TS": "kkt-ts", "Track-and-Stop": "track-and-stop", "uniform": "uniform"}


def style(label: str):
    """The rule's colour and marker, the same in every figure of the project (allocopt.experiments.styles)."""
    from allocopt.experiments import RULE_STYLES

    return RULE_STYLES[RULE_NAMES[label]]


def draw_error_rates(ax, summaries) -> None:
    """The realised error rates against delta on a log axis, with their 95% Clopper-Pearson intervals.

    A run set without a single error has error rate 0, which a log axis cannot show: it is drawn as an open
    downward triangle at the upper end of its interval, 1 - 0.025^(1/n) for n runs (the largest error rate
    that n error-free runs leave plausible), so that zero errors read as "below this line".
    """
    for offset, (label, (n_runs, rows)) in enumerate(summaries.items()):
        x = np.arange(len(rows)) + (offset - 1) * 0.12
        rates = np.array([row.error_rate for row in rows])
        low = np.array([row.error_low for row in rows])
        high = np.array([row.error_high for row in rows])
        some, color = rates > 0, style(label).colour
        if some.any():
            ax.errorbar(x[some], rates[some], yerr=[rates[some] - low[some], high[some] - rates[some]],
                        fmt=style(label).marker, capsize=3, color=color, label=f"{label}: error rate, 95% interval")
        if not some.all():
            ax.plot(x[~some], high[~some], "v", mfc="none", color=color,
                    label=f"{label}: no error in {n_runs} runs (95% upper bound)")
    deltas = [row.delta for row in next(iter(summaries.values()))[1]]
    ax.plot(np.arange(len(deltas)), deltas, "k:", label="delta")
    ax.set_yscale("log")
    ax.set_ylim(top=1.0)  # room above the points for the legend
    ax.set_ylabel("realised error rate")


def draw_figure(path: Path, summaries, allocations, psi_star) -> None:
    """Write the three panels: mean stopping time, realised error rate, average allocation against psi*.

    ``summaries`` maps a rule's label to its number of runs and its summary rows (one per delta);
    ``allocations`` maps it to the average N/t, the number of runs and the budget.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for offset, (label, (n_runs, rows)) in enumerate(summaries.items()):
        x = np.arange(len(rows)) + (offset - 1) * 0.12
        axes[0].errorbar(x, [row.mean_stopping_time for row in rows], yerr=[1.96 * row.standard_error for row in rows],
                         fmt=style(label).marker + "-", capsize=3, color=style(label).colour,
                         label=f"{label} ({n_runs} runs)")
    first_rows = next(iter(summaries.values()))[1]
    deltas = [row.delta for row in first_rows]
    axes[0].plot(np.arange(len(deltas)), [row.lower_bound for row in first_rows], "k--",
                 label="T* kl(delta, 1-delta)")
    draw_error_rates(axes[1], summaries)
    for ax in axes[:2]:
        ax.set_xticks(np.arange(len(deltas)), [str(delta) for delta in deltas])
        ax.set_xlabel("delta")
    times = [row.mean_stopping_time for _, rows in summaries.values() for row in rows]
    if max(times) > 10 * min(times):  # stopping times that span a decade or more: a log axis
        axes[0].set_yscale("log")
    axes[0].set_ylabel("mean stopping time (95% error bars)")
    axes[0].legend(fontsize=8)
    axes[1].legend(fontsize=7, loc="upper right")
    arms = np.arange(1, len(psi_star) + 1)
    axes[2].plot(arms, psi_star, "k-", lw=2, label="psi* (exact solver)")
    for label, (allocation, runs, budget) in allocations.items():
        axes[2].plot(arms, allocation, style(label).marker + "--", ms=4, color=style(label).colour,
                     label=f"{label} N/t at t = {budget} ({runs} runs)")
    axes[2].set_xlabel("arm i (theta_i = 1 - (i-1)/20)")
    axes[2].set_ylabel("allocation")
    axes[2].set_yscale("log")
    axes[2].legend(fontsize=8)
    fig.suptitle("Top-5 of 20 gaussian arms (Wang, Yang, You 2022, Section 5), heuristic threshold")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _table_rows(lines: list[str], header: str) -> list[list[str]]:
    start = next(index for index, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def read_tables(path: Path):
    """The figure's data from the tables of ``identification_figure_1.md`` written by an earlier run.

    The error counts are the printed rates times the runs (rates are multiples of 1/runs, printed to four
    decimals, so this is exact up to 10^4 runs); their Clopper-Pearson intervals are recomputed.
    """
    lines = path.read_text().splitlines()
    summaries: dict[str, tuple[int, list[IdentificationSummaryRow]]] = {}
    for label, runs, delta, mean, error, rate, _, lower, ratio, _ in _table_rows(lines, "| rule | runs |"):
        n_runs = int(runs)
        errors = round(float(rate) * n_runs)
        low, high = binomial_confidence_interval(errors, n_runs)
        row = IdentificationSummaryRow(delta=float(delta), mean_stopping_time=float(mean), standard_error=float(error),
                                       error_rate=errors / n_runs, error_low=low, error_high=high,
                                       lower_bound=float(lower), ratio=float(ratio), stopped_fraction=math.nan)
        summaries.setdefault(label, (n_runs, []))[1].append(row)
    header = next(line for line in lines if line.startswith("| arm | psi* |"))
    columns = [cell.strip() for cell in header.strip().strip("|").split("|")][2:]
    values = np.array([[float(cell) for cell in row[1:]] for row in _table_rows(lines, "| arm | psi* |")])
    allocations = {}
    for position, column in enumerate(columns):
        label, budget, runs = re.fullmatch(r"(.+) \(t = (\d+), (\d+) runs\)", column).groups()
        allocations[label] = (values[:, position + 1], int(runs), int(budget))
    return summaries, allocations, values[:, 0]


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
    parser.add_argument("--replot", action="store_true",
                        help="redraw the figure from the tables an earlier run wrote in OUTPUT, without simulating")
    args = parser.parse_args()
    run = MeasuredRun.start()
    if args.replot:
        summaries, allocations, psi_star = read_tables(args.output / "identification_figure_1.md")
        draw_figure(args.output / "images" / "identification_figure_1.png", summaries, allocations, psi_star)
        return
    problem = TopKProblem(THETA, 5, variance=0.25)
    psi_star = allocopt.solve_topk(problem).psi
    experiments = [("KKT-TS", KKTTS(), args.runs), ("Track-and-Stop", TrackAndStop(), args.tas_runs),
                   ("uniform", Uniform(), args.uniform_runs)]
    results = {}
    for label, rule, runs in experiments:
        results[label] = identify(problem, rule, delta=DELTAS, n_runs=runs, rng=2022, n_jobs=args.jobs,
                                  progress=progress_on_terminal())
        print(results[label].format_summary())
    allocations = {}
    for label, rule, runs, budget in [("KKT-TS", KKTTS(), args.allocation_runs, args.budget),
                                      ("Track-and-Stop", TrackAndStop(), min(args.tas_runs, args.allocation_runs), args.tas_budget),
                                      ("uniform", Uniform(), 20, args.budget)]:
        fixed = identify_fixed_budget(problem, rule, budget, n_runs=runs, rng=7, n_jobs=args.jobs,
                                      progress=progress_on_terminal())
        allocations[label] = (fixed.pulls / fixed.pulls.sum(axis=1, keepdims=True)).mean(axis=0), runs, budget

    summaries = {label: (result.n_runs, result.summary()) for label, result in results.items()}
    draw_figure(args.output / "images" / "identification_figure_1.png", summaries, allocations, psi_star)

    lines = ["# Figure 1 of Wang, Yang, You (2022): KKT-TS, Track-and-Stop and uniform sampling", "",
             run.provenance(),
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
