"""The identification experiments of Wang, Yang, You (2022): fixed confidence (Figures 1, 4, 5), fixed budget
(Figure 2) and the allocation / large-deviation comparison, with every algorithm the paper runs or compares.

Subcommands (each writes a PNG to docs/images/ and its section of docs/wang_yang_you_2022.md, between markers,
with the date, the machine and the measured times):

* ``fixed-confidence --figure {1,4,5}``: mean stopping time (95% error bars) and realised error rate
  against delta in {0.1, 0.01, 0.001}, Chernoff stopping with beta(t, delta) = log((log t + 1)/delta) for
  the rules that use it, the LUCB-type rules with their own stopping rules and the same exploration rate.
  Figure 1 is the paper's instance (gaussian theta_i = 1 - (i-1)/20, i = 1..20, variance 1/4, k = 5).
  The instances of Figures 4 and 5 were lost from the text; Figure 4 here is a Bernoulli instance where
  Theorem 3.4's double star is optimal (condition (14) holds), Figure 5 the paper's Example 1, where it is not
  (two components): the contrast BTS is built on.
* ``fixed-budget``: error rate against the budget (Figure 2): KKT-TS with B_ij, UGapE(b) with a = 5 and the
  true complexity (as the paper does), SAR, OCBAss, OCBASS and uniform.
* ``allocation``: the average allocation N/t of each rule at a large budget against psi*, and the realised
  error rate against exp(-t Gamma(psi_bar)), Gamma(psi_bar) the fixed-budget exponent of the rule's
  average allocation.

``--runs`` sets the replications of every rule; ``--runs-for LABEL=N`` overrides one rule (DT-TS with
100-iteration KKT-Tracking at every step is the costliest rule). Progress bars show on a terminal.

Usage: ``python examples/wang_yang_you_experiments.py fixed-confidence --figure 1 --runs 10000 --jobs 2``;
without a subcommand the script runs every experiment with its defaults.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from allocopt import TopKProblem, solve_topk
from allocopt._scripts import MeasuredRun, progress_on_terminal, write_marked_section
from allocopt.algorithms import KKTTS, compare_policies
from allocopt.algorithms.engine.protocol import get_policy

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "wang_yang_you_2022.md"
DELTAS = (0.1, 0.01, 0.001)

FIGURES = {
    1: ("Figure 1: gaussian theta_i = 1 - (i-1)/20, i = 1..20, variance 1/4, top 5 (Wang, Yang, You 2022, Section 5)",
        lambda: TopKProblem(1.0 - np.arange(20) / 20.0, 5, variance=0.25)),
    4: ("Figure 4 (instance chosen here): Bernoulli theta = 0.9, 0.8, ..., 0.1, top 3; Theorem 3.4's double star "
        "is optimal (condition (14) holds)",
        lambda: TopKProblem(np.round(np.arange(9, 0, -1) / 10.0, 12), 3, family="bernoulli")),
    5: ("Figure 5 (instance chosen here): Example 1 of Wang, Yang, You (2022), gaussian theta = (0.51, 0.5, 0, "
        "-0.01, -0.092), variance 1/4, top 2; the optimum has two components, so the double star is not optimal",
        lambda: TopKProblem([0.51, 0.5, 0.0, -0.01, -0.092], 2, variance=0.25)),
}

# label -> registered rule name (the default configuration of each rule)
# Figure 1 runs every fixed-confidence rule of the paper's Section 5 and Appendix C (the paper's plot shows a
# subset; BTS, the two OCBA rules and LUCB are its Appendix C-D baselines)
FIXED_CONFIDENCE_RULES = {
    1: ["kkt-ts", "dt-ts", "bts", "track-and-stop", "ocba-balanced", "ocba-unbalanced", "lucb", "kl-lucb",
        "kl-elimination", "ugape", "uniform"],
    4: ["kkt-ts", "dt-ts", "bts", "track-and-stop", "ugape", "kl-lucb", "kl-elimination", "uniform"],
    5: ["kkt-ts", "dt-ts", "bts", "track-and-stop", "ugape", "kl-lucb", "kl-elimination", "uniform"],
}


def write_section(name: str, text: str) -> None:
    """Replace the section ``name`` of the docs page (between its markers), creating the page if needed."""
    start, end = f"<!-- {name} start -->", f"<!-- {name} end -->"
    write_marked_section(PAGE, start, end, f"{start}\n{text.rstrip()}\n{end}", heading=(
        "# The identification experiments of Wang, Yang, You (2022)\n\n"
        "Every section below is written by `examples/wang_yang_you_experiments.py`; the commands are in the "
        "section. Numbers are measured, not copied from the paper.\n"))


def _runs(args, labels) -> dict[str, int]:
    runs = {label: args.runs for label in labels}
    for item in args.runs_for or []:
        label, _, value = item.partition("=")
        if label not in runs:
            raise SystemExit(f"--runs-for: unknown rule {label!r} (rules: {', '.join(labels)})")
        runs[label] = int(value)
    return runs


def claims(comparison, labels) -> list[str]:
    """The paper's fixed-confidence claims (Section 5 and Appendix D), as measured in this comparison."""
    results = comparison.results
    lines = ["Claims of the paper, as measured here:", ""]
    paired = {(row.policy, row.checkpoint): row for row in comparison.paired_differences()}
    same = [label for label in ("dt-ts", "bts") if label in labels and labels[0] == "kkt-ts"]
    for label in same:
        parts = [f"{paired[label, delta].mean:+.0f} +- {paired[label, delta].standard_error:.0f}"
                 for delta in DELTAS if (label, delta) in paired]
        lines.append(f"- KKT-TS, DT-TS and BTS do not differ in practice: {label} minus kkt-ts, paired, at delta = "
                     f"{', '.join(f'{delta:g}' for delta in DELTAS)}: {', '.join(parts)}.")
    worst = max(((1.0 - results[label].correct[:, column].mean()) / delta, label, delta)
                for label in labels for column, delta in enumerate(DELTAS))
    lines.append(f"- The stopping is conservative: the largest realised error rate relative to delta is "
                 f"{worst[0]:.3f} x delta ({worst[1]}, delta = {worst[2]:g}).")
    if "ugape" in labels and "kkt-ts" in labels:
        ugape, kkt = results["ugape"], results["kkt-ts"]
        lines.append(f"- UGapE against KKT-TS at delta = 0.1: E[tau] {ugape.stopping_times[:, 0].mean():.0f} against "
                     f"{kkt.stopping_times[:, 0].mean():.0f}; error rate {1 - ugape.correct[:, 0].mean():.4f} "
                     f"against {1 - kkt.correct[:, 0].mean():.4f} (the paper: fewer samples, a much higher "
                     "error rate).")
    return lines


def fixed_confidence(args) -> None:
    run = MeasuredRun.start()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from allocopt.algorithms.plotting import plot_error_rates, plot_sample_complexity

    title, build = FIGURES[args.figure]
    problem = build()
    labels = args.policies or FIXED_CONFIDENCE_RULES[args.figure]
    runs = _runs(args, labels)
    comparison = compare_policies(problem, labels, delta=DELTAS, n_runs=runs, rng=2022, n_jobs=args.jobs,
                                  progress=progress_on_terminal())
    results = comparison.results
    timings = {label: results[label].time for label in labels}
    for label in labels:
        print(results[label].format_summary(), flush=True)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5))
    plot_sample_complexity(comparison, ax=axes[0])
    plot_error_rates(comparison, ax=axes[1])
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    image = ROOT / "docs" / "images" / f"wang_yang_you_figure_{args.figure}.png"
    fig.savefig(image, dpi=110)
    rows = [f"## {title}", "", run.provenance(), "",
            f"Command: `python examples/wang_yang_you_experiments.py fixed-confidence --figure {args.figure} "
            f"--runs {args.runs}" + "".join(f" --runs-for {item}" for item in args.runs_for or [])
            + (f" --policies {' '.join(args.policies)}" if args.policies else "") + "`", "",
            f"T* = {results[labels[0]].characteristic_time:.4g} (exact solver).", "",
            f"![Figure {args.figure}](images/{image.name})", "", comparison.format_table(), "",
            f"Wall time of the whole comparison (the rules' times added up): {sum(timings.values()):.0f} s with "
            f"n_jobs = {args.jobs}.", "",
            "| rule | runs | time (s) | replication-steps | CPU us per replication-step (time x jobs / steps) |",
            "|---|---|---|---|---|"]
    rows += [f"| {label} | {results[label].n_runs} | {timings[label]:.0f} | {results[label].replication_steps} | "
             f"{timings[label] * args.jobs / max(1, results[label].replication_steps) * 1e6:.2f} |"
             for label in labels]
    rows += ["", "Paired differences of the mean stopping time against KKT-TS (common random numbers):", "",
             "| rule | delta | difference | s.e. | pairs |", "|---|---|---|---|---|"]
    rows += [f"| {row.policy} | {row.checkpoint:g} | {row.mean:.1f} | {row.standard_error:.1f} | {row.n_pairs} |"
             for row in comparison.paired_differences()]
    rows += [""] + claims(comparison, labels)
    write_section(f"figure-{args.figure}", "\n".join(rows))
    print("\n".join(rows))


def _fixed_budget_rules(problem: TopKProblem) -> dict:
    from allocopt.algorithms import UGapE
    from allocopt.complexity import h1

    # UGapE(b) as the paper runs it: a = 5 (best in hindsight) and the true complexity H of the instance
    return {"kkt-ts (B)": KKTTS(kind="budget"), "ugape (b)": UGapE("budget", a=5.0, complexity=float(h1(problem.theta, problem.k))),
            "sar": "sar", "ocba-balanced": "ocba-balanced", "ocba-unbalanced": "ocba-unbalanced", "uniform": "uniform"}


def fixed_budget(args) -> None:
    run = MeasuredRun.start()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from allocopt.algorithms.plotting import plot_fixed_budget

    title, build = FIGURES[1]
    problem = build()
    rules = _fixed_budget_rules(problem)
    runs = _runs(args, list(rules))
    budgets = np.unique(np.round(np.geomspace(args.min_budget, args.max_budget, args.n_budgets)).astype(int))
    comparison = compare_policies(problem, rules, budgets=budgets, n_runs=runs, rng=2022, n_jobs=args.jobs,
                                  progress=progress_on_terminal())
    fig, ax = plt.subplots(figsize=(7, 4.5))
    plot_fixed_budget(comparison, ax=ax)
    gamma_b = solve_topk(problem, kind="budget").value
    ax.plot(budgets, np.exp(-budgets * gamma_b), "k:", label="exp(-t Gamma_B*)")
    ax.legend(fontsize="small")
    ax.set_title("Figure 2: " + title.split(": ", 1)[1], fontsize=8)
    fig.tight_layout()
    image = ROOT / "docs" / "images" / "wang_yang_you_figure_2.png"
    fig.savefig(image, dpi=110)
    rows = ["## Figure 2: fixed budget, " + title.split(": ", 1)[1], "", run.provenance(), "",
            f"Command: `python examples/wang_yang_you_experiments.py fixed-budget --runs {args.runs}"
            + "".join(f" --runs-for {item}" for item in args.runs_for or []) + "`", "",
            f"Gamma_B* = {gamma_b:.6g}; UGapE(b) with a = 5 and H = H1 of the instance.", "",
            "![Figure 2](images/wang_yang_you_figure_2.png)", "", comparison.format_table(), "",
            "| rule | time (s) |", "|---|---|"]
    rows += [f"| {label} | {comparison.results[label].time:.0f} |" for label in comparison.labels]
    write_section("figure-2", "\n".join(rows))
    print("\n".join(rows))


def allocation_claims(distance: dict[str, float], exponent: dict[str, float]) -> list[str]:
    """The paper's allocation claim (Section 5), as measured: KKT-TS and OCBAss allocate almost exactly at psi*,
    UGapE and SAR deviate. Each rule's average allocation is judged by its L1 distance to psi* (``distance``) and by
    the fixed-budget exponent Gamma_B(psi_bar) it achieves, relative to Gamma_B* (``exponent``)."""
    ranked = sorted(distance, key=distance.get)
    close = [label for label in ("kkt-ts (B)", "ocba-balanced") if label in distance]
    far = [label for label in ("ugape (b)", "sar") if label in distance]
    lines = ["Claim of the paper, as measured here:", "",
             "- KKT-TS and OCBAss allocate almost exactly at psi*, while UGapE and SAR deviate. Measured L1 distance "
             "of the average allocation to psi* (and Gamma_B(psi_bar) / Gamma_B*): "
             + "; ".join(f"{label} {distance[label]:.4f} ({exponent[label]:.3f})" for label in ranked) + "."]
    if close and far:
        holds = max(distance[label] for label in close) < min(distance[label] for label in far)
        lines.append(f"- {' and '.join(close)} {'are' if len(close) > 1 else 'is'} closer to psi* than "
                     f"{' and '.join(far)}: {'yes' if holds else 'no'}, as measured.")
    return lines


def allocation(args) -> None:
    run = MeasuredRun.start()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from allocopt.algorithms import identify_fixed_budget
    from allocopt.algorithms.plotting import plot_allocations

    title, build = FIGURES[1]
    problem = build()
    psi_star = solve_topk(problem, kind="budget").psi
    rules = _fixed_budget_rules(problem)
    runs = _runs(args, list(rules))
    averages, rates = {}, {}
    checkpoints = np.unique(np.round(np.geomspace(2000, args.budget, 8)).astype(int))
    for label, rule in rules.items():
        anytime = getattr(get_policy(rule, "allocation"), "anytime", True)
        result = identify_fixed_budget(problem, rule, checkpoints if anytime else [args.budget], n_runs=runs[label],
                                       rng=2022, n_jobs=args.jobs, progress=progress_on_terminal())
        averages[label] = (result.pulls / result.pulls.sum(axis=1, keepdims=True)).mean(axis=0)
        rates[label] = result
        print(label, f"{result.time:.0f} s", flush=True)
    # each rule's average allocation: its L1 distance to psi* and its fixed-budget exponent Gamma_B(psi_bar)
    distance = {label: float(np.abs(average - psi_star).sum()) for label, average in averages.items()}
    exponent = {label: float(problem.costs(average, kind="budget").min()) for label, average in averages.items()}
    gamma_b = float(problem.costs(psi_star, kind="budget").min())
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.5))
    plot_allocations(averages, psi_star, ax=axes[0])
    for label, result in rates.items():
        line, = axes[1].plot(result.budgets, np.maximum(result.error_rate, 0.5 / result.n_runs), "o-", label=label)
        axes[1].plot(result.budgets, np.exp(-result.budgets * exponent[label]), ":", color=line.get_color())
    axes[1].set_yscale("log")
    # below a tenth of one error in the runs nothing is measured: the bounds' tails would flatten the rates
    axes[1].set_ylim(0.1 / max(result.n_runs for result in rates.values()), 1.5)
    axes[1].set_xlabel("budget t")
    axes[1].set_ylabel("error rate (dotted: exp(-t Gamma_B(psi_bar)))")
    axes[1].legend(fontsize="small")
    fig.tight_layout()
    image = ROOT / "docs" / "images" / "wang_yang_you_allocations.png"
    fig.savefig(image, dpi=110)
    rows = [f"## Allocations at a budget of {args.budget} and large deviations", "", run.provenance(), "",
            f"Command: `python examples/wang_yang_you_experiments.py allocation --budget {args.budget} "
            f"--runs {args.runs}" + "".join(f" --runs-for {item}" for item in args.runs_for or []) + "`", "",
            "![Allocations](images/wang_yang_you_allocations.png)", "",
            "| rule | runs | sum |N/t - psi*| | Gamma_B(psi_bar) / Gamma_B* | time (s) |", "|---|---|---|---|---|"]
    relative = {label: value / gamma_b for label, value in exponent.items()}
    for label, result in rates.items():
        rows.append(f"| {label} | {result.n_runs} | {distance[label]:.4f} | {relative[label]:.3f} | "
                    f"{result.time:.0f} |")
    rows += [""] + allocation_claims(distance, relative)
    write_section("allocations", "\n".join(rows))
    print("\n".join(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command")
    confidence = commands.add_parser("fixed-confidence", help="Figures 1, 4 and 5")
    confidence.add_argument("--figure", type=int, choices=sorted(FIGURES), default=1)
    confidence.add_argument("--policies", nargs="*", help="registered rule names (default: the figure's rules)")
    budget = commands.add_parser("fixed-budget", help="Figure 2")
    budget.add_argument("--min-budget", type=int, default=200)
    budget.add_argument("--max-budget", type=int, default=30_000)
    budget.add_argument("--n-budgets", type=int, default=10)
    large = commands.add_parser("allocation", help="average allocations at a large budget, large deviations")
    large.add_argument("--budget", type=int, default=10**6)
    for command in (confidence, budget, large):
        command.add_argument("--runs", type=int, default=10_000)
        command.add_argument("--runs-for", action="append", metavar="LABEL=N")
        command.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    run = {"fixed-confidence": fixed_confidence, "fixed-budget": fixed_budget, "allocation": allocation}
    if args.command is not None:
        run[args.command](args)
        return
    # no subcommand (as `make examples` runs it): every experiment with its defaults
    for argv in (["fixed-confidence", "--figure", str(figure)] for figure in sorted(FIGURES)):
        run["fixed-confidence"](parser.parse_args(argv))
    for command in ("fixed-budget", "allocation"):
        run[command](parser.parse_args([command]))


if __name__ == "__main__":
    main()
