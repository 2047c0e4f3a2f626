"""Figure 2 of Shahrampour and Tarokh (2017): misidentification probability of NSAR, SAR, AT-LUCB and uniform.

K = 50 Bernoulli arms, setups 1-6 of Section IV.A (``allocopt.testing.bandit_instances.nsar_setup``), M in {2, 4},
budget T = ceil(H1^(M)); NSAR with p in {0.7, 0.85, 1.1, 1.2, 1.3}, SAR, AT-LUCB (when a rule named "at-lucb" is
registered) and uniform allocation. The paper runs 4000 experiments per setup (``--runs``). Where the paper leaves a
parameter out: setup 4's top mean is 0.7 (the top mean of the other setups) and setup 5's Beta(5, 5) means are drawn
with seed 5. The arms are listed in a fixed random order (seed 0), so that no rule gains from the engine's
index-order tie-break of the empirical top-M (uniform's recommendation).

Beside each setup it prints H1^(M) (the budget), H2^(M) logbar(K) (SAR's complexity) and C_p H^(M)(p) (NSAR's) for
each p, and Proposition 2's bound 2 K^2 exp(-(T-K)/(8 C_p H^(M)(p))).

Writes ``docs/images/nsar_experiment.png`` and, between the ``nsar-experiment`` markers of ``docs/algorithms.md``,
the table and the paper's statements of Section IV.A next to the measured differences of error rates. The rules
see the same rewards (common random numbers), so each difference is paired: the mean over runs of
1{rule wrong} - 1{other wrong}, with a 95% normal interval (1.96 standard errors of the paired differences).

Usage: ``python examples/nsar_experiment.py [--runs 4000] [--jobs 2]``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from allocopt import TopKProblem
from allocopt._scripts import MeasuredRun, progress_on_terminal, write_docs_section
from allocopt.algorithms import NSAR, POLICIES, SAR, identify_fixed_budget
from allocopt.complexity import c_p, h1, h2, h_p, logbar, nsar_error_bound
from allocopt.simulate import paired_mean_difference
from allocopt.testing.bandit_instances import nsar_setup

ROOT = Path(__file__).resolve().parent.parent
P_GRID = (0.7, 0.85, 1.1, 1.2, 1.3)
BEGIN, END = "<!-- nsar-experiment:begin -->", "<!-- nsar-experiment:end -->"
HIGH_P = ("NSAR p=1.1", "NSAR p=1.2", "NSAR p=1.3")
# Shahrampour and Tarokh (2017), Section IV.A, the statements on Figure 2, and the rules each one compares
PAPER = {1: ("NSAR with p in {0.7, 0.85} outperforms SAR; AT-LUCB is better than NSAR (Regime 1)",
             ("NSAR p=0.7", "NSAR p=0.85")),
         2: ("for at least two p in {1.1, 1.2, 1.3} NSAR is as competitive as SAR and AT-LUCB, outperforming at least "
             "one of them (close to Regime 2)", HIGH_P),
         3: ("as setup 2", HIGH_P),
         4: ("NSAR with p in {1.1, 1.2, 1.3} outperforms SAR and is as competitive as AT-LUCB", HIGH_P),
         5: ("NSAR with every p in {1.1, 1.2, 1.3} outperforms SAR and AT-LUCB", HIGH_P),
         6: ("as setup 2", HIGH_P)}


def paired_difference(wrong: np.ndarray, other: np.ndarray) -> str:
    """Mean of 1{wrong} - 1{other wrong} over paired runs, with its 95% interval, as text."""
    paired = paired_mean_difference(wrong, other)
    low, high = paired.interval()
    verdict = "lower" if high < 0 else "higher" if low > 0 else "level"
    return f"{paired.mean:+.4f} [{low:+.4f}, {high:+.4f}] {verdict}"


def instance(setup: int, m: int) -> np.ndarray:
    theta = nsar_setup(setup, m, 50, rng=5)
    return theta[np.random.default_rng(0).permutation(theta.size)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--setups", default="1,2,3,4,5,6")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rules = [(f"NSAR p={p:g}", NSAR(p=p)) for p in P_GRID] + [("SAR", SAR())]
    if "at-lucb" in POLICIES:
        rules.append(("AT-LUCB", "at-lucb"))
    rules.append(("uniform", "uniform"))
    setups = [int(value) for value in args.setups.split(",")]
    rows, errors, wrong = [], {}, {}
    run = MeasuredRun.start()
    for m in (2, 4):
        for setup in setups:
            theta = instance(setup, m)
            budget = math.ceil(float(h1(theta, m)))
            problem = TopKProblem(theta, k=m, family="bernoulli")
            measures = (f"H1 = {float(h1(theta, m)):.0f}, H2 logbar(K) = {float(h2(theta, m)) * logbar(50):.0f}, "
                        + ", ".join(f"C_p H(p) [p={p:g}] = {c_p(50, p) * float(h_p(theta, p, m)):.0f}"
                                    for p in P_GRID))
            print(f"setup {setup}, M = {m}, T = {budget}: {measures}")
            for label, rule in rules:
                clock = time.perf_counter()
                result = identify_fixed_budget(problem, rule, [budget], n_runs=args.runs, rng=2017, n_jobs=args.jobs,
                                               progress=progress_on_terminal())
                bound = ""
                if label.startswith("NSAR") or label == "SAR":
                    p = 1.0 if label == "SAR" else float(label.split("=")[1])
                    bound = f"{float(nsar_error_bound(theta, m, p).error_probability(budget)):.3g}"
                errors[(m, setup, label)] = result.error_rate[0]
                wrong[(m, setup, label)] = ~result.correct[:, 0]
                rows.append((m, setup, budget, label, result.error_rate[0], result.error_low[0], result.error_high[0],
                             bound, time.perf_counter() - clock))
                print(f"  {label:>14}: error {result.error_rate[0]:.4f} [{result.error_low[0]:.4f}, "
                      f"{result.error_high[0]:.4f}]  Prop. 2 bound {bound or '-'}  ({rows[-1][-1]:.1f} s)")

    figure, axes = plt.subplots(2, len(setups), figsize=(3 * len(setups), 6), squeeze=False)
    labels = [label for label, _ in rules]
    colours = plt.cm.viridis(np.linspace(0, 0.9, len(labels)))
    for row, m in enumerate((2, 4)):
        for column, setup in enumerate(setups):
            axis = axes[row, column]
            axis.bar(np.arange(1, len(labels) + 1), [errors[(m, setup, label)] for label in labels], color=colours)
            axis.set_title(f"setup {setup}, M = {m}", fontsize=9)
            axis.set_xticks(np.arange(1, len(labels) + 1))
    axes[0, 0].set_ylabel("misidentification probability")
    axes[1, 0].set_ylabel("misidentification probability")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colour) for colour in colours]
    figure.legend(handles, [f"{index}: {label}" for index, label in enumerate(labels, 1)], loc="lower center",
                  ncol=len(labels), fontsize=8)
    figure.suptitle(f"K = 50 Bernoulli arms, T = ceil(H1), {args.runs} runs per bar")
    figure.tight_layout(rect=(0, 0.06, 1, 0.95))
    image = args.docs / "images" / "nsar_experiment.png"
    image.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(image, dpi=110)

    table = ["Error rates with 95% Clopper-Pearson intervals; the last column is Proposition 2's bound for NSAR and "
             "SAR.", "",
             "![NSAR experiment](images/nsar_experiment.png)", "",
             "| M | setup | T | rule | error | 95% interval | Prop. 2 bound | seconds |", "|---|---|---|---|---|---|---|---|"]
    for m, setup, budget, label, rate, low, high, bound, seconds in rows:
        table.append(f"| {m} | {setup} | {budget} | {label} | {rate:.4f} | [{low:.4f}, {high:.4f}] | {bound or '-'} "
                     f"| {seconds:.1f} |")
    table += ["", "What the paper states (Section IV.A) next to the measured paired differences of error rates "
              "(rule minus comparator; 'lower' when the whole 95% interval is below 0, 'higher' when above, else "
              "'level'):", ""]
    have_at_lucb = "AT-LUCB" in labels
    for m in (2, 4):
        for setup in setups:
            statement, chosen = PAPER[setup]
            table.append(f"* M = {m}, setup {setup}. Paper: {statement}. Measured:")
            for label in chosen:
                versus = [f"{label} - SAR: {paired_difference(wrong[(m, setup, label)], wrong[(m, setup, 'SAR')])}"]
                if have_at_lucb:
                    versus.append(f"{label} - AT-LUCB: "
                                  f"{paired_difference(wrong[(m, setup, label)], wrong[(m, setup, 'AT-LUCB')])}")
                table.append("  " + "; ".join(versus) + ".")
            others = [label for label in labels if label != "uniform"]
            best = min(others, key=lambda label: errors[(m, setup, label)])
            table.append(f"  Uniform - best other rule ({best}): "
                         f"{paired_difference(wrong[(m, setup, 'uniform')], wrong[(m, setup, best)])} "
                         f"(paper: uniform allocation is outperformed by every other method).")
    page = args.docs / "algorithms.md"
    write_docs_section(page, "nsar-experiment", run, table, markers=(BEGIN, END))
    print(f"wrote {image} and the table in {page}")


if __name__ == "__main__":
    main()
