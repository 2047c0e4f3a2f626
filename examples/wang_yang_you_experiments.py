"""The identification experiments of Wang, Yang, You (2022): fixed confidence (Figures 1, 4, 5), fixed budget
(Figure 2) and the allocation / large-deviation comparison, with every algorithm the paper runs or compares.

Figures 1, 2, 4 and 5 are specs, ``examples/experiments/wang_yang_you_figure_N.toml`` (the instances, the rules and
their options, the deltas or budgets, 10^4 runs; the spec's comments say where the paper's text is silent). The
subcommands ``fixed-confidence --figure {1,4,5}`` and ``fixed-budget`` run a figure's spec into a store (only the
chunks the store does not hold: a killed run is completed by running it again) and write its report, the tables,
the paired differences against KKT-TS and the figures, into ``docs/experiments/wang_yang_you_figure_N/``. The same
from the shell::

    allocopt experiment run examples/experiments/wang_yang_you_figure_1.toml --store stores/figure_1 --jobs 2
    allocopt experiment report stores/figure_1 --out docs/experiments/wang_yang_you_figure_1

``allocation`` (not a spec: it analyses the average allocations N/t) writes a PNG to docs/images/ and its
section of docs/wang_yang_you_2022.md, between markers, with the date, the machine and the measured times: the
average allocation N/t of each rule at a large budget against psi*, and the realised error rate against
exp(-t Gamma(psi_bar)), Gamma(psi_bar) the fixed-budget exponent of the rule's average allocation.

Usage: ``python examples/wang_yang_you_experiments.py fixed-confidence --figure 1 --jobs 2``; without a subcommand
the script runs every experiment with its defaults.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from allocopt import TopKProblem, solve_topk
from allocopt._scripts import MeasuredRun, progress_on_terminal, write_marked_section
from allocopt.algorithms import KKTTS
from allocopt.algorithms.engine.protocol import get_policy
from allocopt.experiments import load_spec, rule_styles, run_experiment, write_report

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "wang_yang_you_2022.md"
SPECS = {figure: ROOT / "examples" / "experiments" / f"wang_yang_you_figure_{figure}.toml" for figure in (1, 2, 4, 5)}


def _figure(figure: int):
    """The title (the spec's description) and the problem of a figure's spec."""
    spec = load_spec(SPECS[figure])
    return f"Figure {figure}: {spec.description.split(';')[0]}", spec.instances[0].problem


# the figures' instances and rules, defined once in their specs (benchmarks/figure1_probe.py reads these)
FIGURES = {figure: _figure(figure) for figure in (1, 4, 5)}
FIXED_CONFIDENCE_RULES = {figure: [rule.label for rule in load_spec(SPECS[figure]).rules] for figure in (1, 4, 5)}


def write_section(name: str, text: str) -> None:
    """Replace the section ``name`` of the docs page (between its markers), creating the page if needed."""
    start, end = f"<!-- {name} start -->", f"<!-- {name} end -->"
    write_marked_section(PAGE, start, end, f"{start}\n{text.rstrip()}\n{end}", heading=(
        "# The identification experiments of Wang, Yang, You (2022)\n\n"))


def _runs(args, labels) -> dict[str, int]:
    runs = {label: args.runs for label in labels}
    for item in args.runs_for or []:
        label, _, value = item.partition("=")
        if label not in runs:
            raise SystemExit(f"--runs-for: unknown rule {label!r} (rules: {', '.join(labels)})")
        runs[label] = int(value)
    return runs


def run_figure(figure: int, args) -> None:
    """Run the figure's spec into its store and write its report."""
    store = args.store or ROOT / "stores" / f"figure_{figure}"
    print(run_experiment(SPECS[figure], store, n_jobs=args.jobs, progress=progress_on_terminal()).message)
    print(write_report(store, ROOT / "docs" / "experiments" / f"wang_yang_you_figure_{figure}").message)


def fixed_confidence(args) -> None:
    run_figure(args.figure, args)


def fixed_budget(args) -> None:
    run_figure(2, args)


def confidence_claims(report: Path) -> list[str]:
    """The paper's claims about a fixed-confidence figure (Section 5, Appendix D), as measured in a report's tables
    (``summary.csv`` and ``paired_differences.csv`` of ``allocopt experiment report``): KKT-TS, DT-TS and BTS do not
    differ in practice; the stopping is conservative; UGapE takes fewer samples with a much higher error rate."""
    import pandas as pd

    summary = pd.read_csv(report / "summary.csv")
    paired = pd.read_csv(report / "paired_differences.csv")
    times = paired[(paired["value"] == "stopping_time") & (paired["reference"] == "kkt-ts")]
    lines = ["Claims of the paper, as measured in the report:", ""]
    for rule in ("dt-ts", "bts"):
        rows = times[times["rule"] == rule].sort_values("delta", ascending=False)
        if len(rows):
            deltas = ", ".join(f"{delta:g}" for delta in rows["delta"])
            differences = ", ".join(f"{mean:+.1f} +- {error:.1f}"
                                    for mean, error in zip(rows["mean"], rows["standard_error"]))
            lines.append(f"- KKT-TS, DT-TS and BTS do not differ in practice: {rule} minus kkt-ts, paired, at delta = "
                         f"{deltas}: {differences}.")
    worst = summary.assign(relative=summary["error_rate"] / summary["delta"]).sort_values("relative").iloc[-1]
    lines.append(f"- The stopping is conservative: the largest realised error rate relative to delta is "
                 f"{worst['relative']:.3f} x delta ({worst['rule']}, delta = {worst['delta']:g}).")
    at = summary[summary["delta"] == summary["delta"].max()].set_index("rule")
    if {"ugape", "kkt-ts"} <= set(at.index):
        lines.append(f"- UGapE against KKT-TS at delta = {summary['delta'].max():g}: E[tau] "
                     f"{at.loc['ugape', 'mean_stopping_time']:.0f} against {at.loc['kkt-ts', 'mean_stopping_time']:.0f}; "
                     f"error rate {at.loc['ugape', 'error_rate']:.4f} against {at.loc['kkt-ts', 'error_rate']:.4f} "
                     "(the paper: fewer samples, a much higher error rate).")
    return lines


def write_figure_section(args) -> None:
    """Write a figure's section of the docs page from its report (``docs/experiments/wang_yang_you_figure_N/``):
    the store's command, the link, the figures and, at fixed confidence, the paper's claims as measured."""
    spec = load_spec(SPECS[args.figure])
    name = f"wang_yang_you_figure_{args.figure}"
    report = ROOT / "docs" / "experiments" / name
    head = (report / "report.md").read_text(encoding="utf-8")
    store_line = next(line for line in head.splitlines() if line.startswith("| store |"))
    source = (f"From the store of `allocopt experiment run examples/experiments/{name}.toml` "
              f"({store_line.split('|')[2].strip()}), reported by `allocopt experiment report`: the tables, the "
              f"paired differences against {spec.report.get('reference', 'the reference')} and the compute time "
              f"are in [the report](experiments/{name}/report.md).")
    lines = [f"## {_figure(args.figure)[0]} (Wang, Yang, You 2022, Section 5)", "", source, ""]
    for png in sorted(report.glob("*.png")):
        lines += [f"![{_figure(args.figure)[0].split(':')[0]}: {png.stem.replace('_', ' ')}](experiments/{name}/{png.name})",
                  ""]
    if spec.setting == "confidence":
        lines += confidence_claims(report)
    write_section(f"figure-{args.figure}", "\n".join(lines))
    print("\n".join(lines))


def _fixed_budget_rules(problem: TopKProblem) -> dict:
    from allocopt.algorithms import UGapE
    from allocopt.complexity import h1

    # UGapE(b) as the paper runs it: a = 5 (best in hindsight) and the true complexity H of the instance
    return {"kkt-ts (B)": KKTTS(kind="budget"), "ugape (b)": UGapE("budget", a=5.0, complexity=float(h1(problem.theta, problem.k))),
            "sar": "sar", "ocba-balanced": "ocba-balanced", "ocba-unbalanced": "ocba-unbalanced", "uniform": "uniform"}


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


ALLOCATION_DATA = ROOT / "docs" / "images" / "wang_yang_you_allocations.json"
"""What ``allocation`` measured (average allocations, error rates at the budgets, runs, times), so that
``allocation --replot`` redraws the figure and rewrites the section without simulating."""


def allocation(args) -> None:
    """Run the allocation comparison (or, with ``--replot``, read what the last run saved) and write its figure and
    section."""
    import json

    if args.replot:
        if not ALLOCATION_DATA.exists():
            raise SystemExit(f"allocation --replot: no saved measurements ({ALLOCATION_DATA}); run 'allocation' first")
        data = json.loads(ALLOCATION_DATA.read_text(encoding="utf-8"))
    else:
        data = measure_allocations(args)
        ALLOCATION_DATA.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    draw_allocations(data)
    rows = allocation_section(data)
    write_section("allocations", "\n".join(rows))
    print("\n".join(rows))


def measure_allocations(args) -> dict:
    """Each rule's average allocation N/t at ``args.budget`` and its error rates at the checkpoints (the budget alone
    for a rule that needs it), on Figure 1's instance; psi* and Gamma_B* of the fixed-budget problem."""
    from allocopt.algorithms import identify_fixed_budget

    run = MeasuredRun.start()
    problem = FIGURES[1][1]()
    psi_star = solve_topk(problem, kind="budget").psi
    rules = _fixed_budget_rules(problem)
    runs = _runs(args, list(rules))
    checkpoints = np.unique(np.round(np.geomspace(2000, args.budget, 8)).astype(int))
    measured = {}
    for label, rule in rules.items():
        anytime = getattr(get_policy(rule, "allocation"), "anytime", True)
        result = identify_fixed_budget(problem, rule, checkpoints if anytime else [args.budget], n_runs=runs[label],
                                       rng=2022, n_jobs=args.jobs, progress=progress_on_terminal())
        average = (result.pulls / result.pulls.sum(axis=1, keepdims=True)).mean(axis=0)
        measured[label] = {"rule": get_policy(rule, "allocation").name, "average": average.tolist(),
                           "budgets": np.asarray(result.budgets).tolist(),
                           "error_rate": np.asarray(result.error_rate).tolist(), "n_runs": int(result.n_runs),
                           "time": float(result.time)}
        print(label, f"{result.time:.0f} s", flush=True)
    command = (f"python examples/wang_yang_you_experiments.py allocation --budget {args.budget} --runs {args.runs}"
               + "".join(f" --runs-for {item}" for item in args.runs_for or []))
    return {"budget": args.budget, "command": command, "provenance": run.provenance(), "psi_star": psi_star.tolist(),
            "theta": problem.theta.tolist(), "k": problem.k, "variance": float(np.asarray(problem.dispersion)[0]),
            "rules": measured}


def _allocation_exponents(data: dict) -> tuple[dict, dict, float]:
    """Each rule's L1 distance to psi* and fixed-budget exponent Gamma_B(psi_bar), and Gamma_B*."""
    problem = TopKProblem(data["theta"], data["k"], variance=data["variance"])
    psi_star = np.asarray(data["psi_star"])
    averages = {label: np.asarray(rule["average"]) for label, rule in data["rules"].items()}
    distance = {label: float(np.abs(average - psi_star).sum()) for label, average in averages.items()}
    exponent = {label: float(problem.costs(average, kind="budget").min()) for label, average in averages.items()}
    return distance, exponent, float(problem.costs(psi_star, kind="budget").min())


def draw_allocations(data: dict) -> None:
    """Left: the average allocations against psi*. Right: error rates against the budget (log axes), each rule's
    exp(-t Gamma_B(psi_bar)) dotted; a budget at which no run erred is a hollow marker at 1/(2 runs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from allocopt.algorithms.plotting import plot_allocations

    _, exponent, _ = _allocation_exponents(data)
    styles = rule_styles([(label, rule["rule"]) for label, rule in data["rules"].items()])
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.8))
    plot_allocations({label: rule["average"] for label, rule in data["rules"].items()}, data["psi_star"],
                     ax=axes[0], colours={label: style.colour for label, style in styles.items()})
    axes[0].set_title(f"average allocation N/t at t = {data['budget']:,}")
    floor = 0.5 / max(rule["n_runs"] for rule in data["rules"].values())
    for row, (label, rule) in enumerate(data["rules"].items()):
        style, budgets, rate = styles[label], np.asarray(rule["budgets"]), np.asarray(rule["error_rate"])
        erred = rate > 0
        axes[1].plot(budgets[erred], rate[erred], style.marker + "-", color=style.colour,
                     label=label if erred.any() else None)
        # no error at these budgets: hollow markers in one row per rule just above 1/(2 runs)
        axes[1].plot(budgets[~erred], np.full((~erred).sum(), floor * 1.15 ** row), style.marker, color=style.colour,
                     markerfacecolor="none", label=None if erred.any() else label)
        grid = np.geomspace(budgets.min() if budgets.size > 1 else 2000, data["budget"], 200)
        axes[1].plot(grid, np.exp(-grid * exponent[label]), ":", color=style.colour)
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    axes[1].set_ylim(0.5 * floor, 1.5)
    axes[1].set_xlabel("budget t")
    axes[1].set_ylabel("error rate")
    axes[1].set_title(f"dotted: exp(-t Gamma_B(psi_bar)); hollow: no error in the runs (a row per rule from "
                      f"{floor:g} up)", fontsize="medium")
    axes[1].legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(ROOT / "docs" / "images" / "wang_yang_you_allocations.png", dpi=110)
    plt.close(fig)


def allocation_section(data: dict) -> list[str]:
    """The docs section of the allocation comparison: provenance, command, figure, table and the paper's claim."""
    distance, exponent, gamma_b = _allocation_exponents(data)
    relative = {label: value / gamma_b for label, value in exponent.items()}
    command = (f"Command: `{data['command']}` (its measurements are saved in "
               "`docs/images/wang_yang_you_allocations.json`; `--replot` redraws the figure and this section from them)")
    rows = [f"## Allocations at a budget of {data['budget']} and large deviations", "", data["provenance"], "", command, "",
            "![Allocations](images/wang_yang_you_allocations.png)", "",
            "| rule | runs | L1 distance sum_a abs(N_a/t - psi*_a) | Gamma_B(psi_bar) / Gamma_B* | time (s) |", "|---|---|---|---|---|"]
    for label, rule in data["rules"].items():
        rows.append(f"| {label} | {rule['n_runs']} | {distance[label]:.4f} | {relative[label]:.3f} | "
                    f"{rule['time']:.0f} |")
    return rows + [""] + allocation_claims(distance, relative)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command")
    confidence = commands.add_parser("fixed-confidence", help="Figures 1, 4 and 5 (their specs)")
    confidence.add_argument("--figure", type=int, choices=sorted(FIGURES), default=1)
    budget = commands.add_parser("fixed-budget", help="Figure 2 (its spec)")
    for command in (confidence, budget):
        command.add_argument("--store", type=Path, default=None, help="default: stores/figure_N")
        command.add_argument("--jobs", type=int, default=None, help="local joblib workers (default: this process)")
    large = commands.add_parser("allocation", help="average allocations at a large budget, large deviations")
    large.add_argument("--budget", type=int, default=10**6)
    large.add_argument("--runs", type=int, default=10_000)
    large.add_argument("--runs-for", action="append", metavar="LABEL=N")
    large.add_argument("--jobs", type=int, default=2)
    large.add_argument("--replot", action="store_true",
                       help="redraw the figure and the section from the measurements the last run saved")
    section = commands.add_parser("section", help="write a figure's section of the docs page from its report")
    section.add_argument("--figure", type=int, choices=sorted(SPECS), default=1)
    args = parser.parse_args()
    run = {"fixed-confidence": fixed_confidence, "fixed-budget": fixed_budget, "allocation": allocation,
           "section": write_figure_section}
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
