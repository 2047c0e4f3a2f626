"""Benchmarks of the CBMAI layer. Prints figures measured in this run; asserts nothing.

1. IV scores of all K + L = 26 columns for K = 24, L = 2 (instance D2P); goal: under 5 ms.
2. solve_cbmai per method, and Lagrangian scores, at that size.
3. One run of SFSR, SFSR-L and USLP at that size (single-run API), and the per-run cost inside the
   vectorised Monte Carlo harness.
4. The Appendix C experiment on D1P, D2P, D3P (SFSR, SFSR-L, USLP; budgets 500..8000; 5000 runs per point):
   ``--sample`` runs per point are simulated with joblib/loky on ``--jobs`` workers and the time is projected to
   5000 runs. Reference: the paper reports about 2 hours for a figure of six instances on an Apple M1 laptop
   (about 20 minutes per instance); goal: under 2 minutes per instance on this 2-core machine. ``--full``
   runs the 5000 runs per point for real and prints the error-rate table.
5. cbmai_hardness on D1P-D3P (time, Delta_0^2, Delta_(L+2)^2, exponents), and a consistency check of the USLP
   exponent (14) on D2P: USLP's error rate at N = 8000, 32000, 128000 (``--uslp-runs`` runs each) beside the
   Gaussian tail Phi(-sqrt(2 e N)) of the exponent e.

Usage: ``python benchmarks/cbmai.py [--sample 500] [--jobs 2] [--full] [--skip-hardness] [--write-docs]``;
``--write-docs`` writes what it prints into its section of docs/cbmai.md, with the date, the machine and the load.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

import joblib
from scipy.special import ndtr

import allocopt
from allocopt._scripts import MeasuredRun, progress_on_terminal, tee_stdout, write_docs_section
from allocopt.algorithms import cbmai_error_rate, sfsr, uslp

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cbmai.md"
INSTANCES = ("cbmai-d1p", "cbmai-d2p", "cbmai-d3p")
BUDGETS = (500, 1000, 2000, 4000, 8000)
ALGORITHMS = ("sfsr", "sfsr-l", "uslp")
LABELS = {"sfsr": "SFSR", "sfsr-l": "SFSR-L", "uslp": "USLP"}
PAPER_RUNS = 5000
PAPER_MINUTES_PER_INSTANCE = 120 / 6


def median_time(function, repeat: int) -> float:
    function()  # warm-up (imports, caches)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def section(title: str) -> None:
    print(f"\n### {title}\n")


def table(header: list[str], rows: list[list[str]]) -> None:
    """Print a markdown table (readable on a terminal too)."""
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()


def milliseconds(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def lp_timings(problem: allocopt.CBMAIProblem) -> None:
    n_bases = allocopt.enumerate_bases(problem).n_bases
    section(f"The LP layer at K = {problem.n_arms}, L = {problem.n_costs} (D2P, {n_bases} bases), median of repeated calls")
    rows = [["`iv_scores`, all " + f"{problem.n_columns} columns (goal: under 5 ms)",
             milliseconds(median_time(lambda: allocopt.iv_scores(problem), 200))],
            ["`iv_scores(strict=True)`", milliseconds(median_time(lambda: allocopt.iv_scores(problem, strict=True), 200))],
            ["`enumerate_bases`", milliseconds(median_time(lambda: allocopt.enumerate_bases(problem), 200))]]
    for method in allocopt.CBMAI_METHODS:
        seconds = median_time(lambda: allocopt.solve_cbmai(problem, method, diagnose=False), 50)
        rows.append([f"`solve_cbmai(method={method!r}, diagnose=False)`", milliseconds(seconds)])
    rows.append(["`solve_cbmai()` with the Assumption 1 diagnostics",
                 milliseconds(median_time(lambda: allocopt.solve_cbmai(problem), 50))])
    rows.append(["`lagrangian_scores`", milliseconds(median_time(lambda: allocopt.lagrangian_scores(problem), 50))])
    table(["what", "time"], rows)


def run_timings(problem: allocopt.CBMAIProblem) -> None:
    section("One run of each algorithm on D2P at N = 8000")
    seeds = iter(range(10**6))
    single = {"sfsr": lambda: sfsr(problem, 8000, rng=next(seeds)),
              "sfsr-l": lambda: sfsr(problem, 8000, score="lagrangian", rng=next(seeds)),
              "uslp": lambda: uslp(problem, 8000, rng=next(seeds))}
    rows = []
    for algorithm in ALGORITHMS:
        rate = cbmai_error_rate(problem, algorithm, 8000, 1000, rng=1, n_jobs=1, chunk_size=250)
        rows.append([LABELS[algorithm], milliseconds(median_time(single[algorithm], 30)),
                     milliseconds(rate.time / 1000)])
    table(["algorithm", "single-run API (median of 30)", "per run in the vectorised harness (1 worker, chunks of 250)"],
          rows)


def interval(rate) -> str:
    return f"{rate.error_rate:.3f} [{rate.ci_low:.3f}, {rate.ci_high:.3f}]"


def compared(first, second) -> str:
    """How the error rate ``first`` compares with ``second``, judged by their 95% intervals."""
    if first.ci_high < second.ci_low:
        return "below"
    if first.ci_low > second.ci_high:
        return "above"
    return "level (overlapping intervals) with"


def appendix_c(sample: int, jobs: int, full: bool) -> None:
    runs = PAPER_RUNS if full else sample
    rates: dict[tuple[str, str, int], object] = {}
    seconds: dict[str, float] = {}
    with joblib.parallel_config(backend="loky", n_jobs=jobs):
        cbmai_error_rate(allocopt.CBMAIProblem.from_reference(INSTANCES[0]), "uslp", 500, 2 * jobs, rng=0)  # warm-up
        for name in INSTANCES:
            problem = allocopt.CBMAIProblem.from_reference(name)
            start = time.perf_counter()
            for algorithm in ALGORITHMS:
                for budget in BUDGETS:
                    rates[name, algorithm, budget] = cbmai_error_rate(problem, algorithm, budget, runs, rng=2024,
                                                                      progress=progress_on_terminal())
            seconds[name] = time.perf_counter() - start
    section(f"Appendix C experiment: time ({runs} runs per point, {'run in full' if full else f'projected to {PAPER_RUNS}'}, "
            f"loky, {jobs} workers)")
    print(f"The paper reports about 2 hours for its figure of six instances on an Apple M1 laptop, about "
          f"{PAPER_MINUTES_PER_INSTANCE:.0f} minutes per instance; the goal is under 2 minutes per instance.\n")
    rows = []
    for name, measured in seconds.items():
        projected = measured * PAPER_RUNS / runs
        rows.append([short(name), f"{measured:.1f} s for {runs * len(ALGORITHMS) * len(BUDGETS)} runs",
                     f"{projected / 60:.2f} min", f"{PAPER_MINUTES_PER_INSTANCE * 60 / projected:.0f}x"])
    table(["instance", "measured", f"for 15 x {PAPER_RUNS} runs", "speed-up on the paper's ~20 min"], rows)
    section(f"Appendix C experiment: error rate with its 95% Clopper-Pearson interval ({runs} runs per point)")
    table(["instance", "algorithm", *[f"N = {budget}" for budget in BUDGETS]],
          [[short(name), LABELS[algorithm], *[interval(rates[name, algorithm, budget]) for budget in BUDGETS]]
           for name in INSTANCES for algorithm in ALGORITHMS])
    last = BUDGETS[-1]
    print(f"Compared with the paper's text at N = {last} (its Figure 5 is only a plot; it says SFSR-L is the same "
          f"as SFSR or a bit better on these two-constraint instances; its Section 5 says both flavours clearly outperform USLP on its Figure 2 instances):\n")
    for name in INSTANCES:
        sfsr_rate, lagrangian, uniform = (rates[name, algorithm, last] for algorithm in ALGORITHMS)
        print(f"* {short(name)}: SFSR-L {interval(lagrangian)} is {compared(lagrangian, sfsr_rate)} SFSR "
              f"{interval(sfsr_rate)}; SFSR is {compared(sfsr_rate, uniform)} USLP {interval(uniform)}.")
    print()


def hardness_table() -> None:
    section("`cbmai_hardness` on D1P-D3P (sigma_r = 1, sigma_c = 0.5)")
    rows = []
    for name in INSTANCES:
        hardness = allocopt.cbmai_hardness(allocopt.CBMAIProblem.from_reference(name), 1.0, 0.5)
        rows.append([short(name), f"{hardness.time:.1f}", f"{hardness.resolution}",
                     f"{hardness.infeasibility_gap:.3e}", f"{hardness.sorted_gaps[3]:.3e}",
                     f"{hardness.consistent_exponent:.3e}", f"{hardness.uslp_exponent:.3e}",
                     f"{hardness.sfsr_exponent:.3e}"])
    table(["instance", "time (s)", "lattice", "`Delta_0^2`", "`Delta_(L+2)^2`", "(13) any consistent", "(14) USLP",
           "(15) SFSR"], rows)


def uslp_consistency(runs: int, jobs: int) -> None:
    problem = allocopt.CBMAIProblem.from_reference("cbmai-d2p")
    exponent = allocopt.cbmai_hardness(problem, 1.0, 0.5).uslp_exponent
    section(f"USLP on D2P against its exponent (14), e = {exponent:.3e}")
    print(f"A consistency check: USLP's error rate ({runs} runs per budget, 95% Clopper-Pearson interval) beside the "
          f"Gaussian tail Phi(-sqrt(2 e N)) that an exponent e suggests.\n")
    rows = []
    with joblib.parallel_config(backend="loky", n_jobs=jobs):
        for budget in (8000, 32000, 128000):
            rate = cbmai_error_rate(problem, "uslp", budget, runs, rng=7, progress=progress_on_terminal())
            rows.append([f"{budget}", interval(rate), f"{ndtr(-math.sqrt(2 * exponent * budget)):.3f}"])
    table(["N", "USLP error rate", "Phi(-sqrt(2 e N))"], rows)


def short(name: str) -> str:
    return name[-3:].upper()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=500, help="runs per point for the projection")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--full", action="store_true", help="run 5000 runs per point for real")
    parser.add_argument("--skip-hardness", action="store_true")
    parser.add_argument("--uslp-runs", type=int, default=2000, help="runs per budget of the USLP check")
    parser.add_argument("--write-docs", action="store_true", help="write what is printed into docs/cbmai.md")
    parser.add_argument("--docs", type=Path, default=DOCS, help=argparse.SUPPRESS)  # another copy of the page
    args = parser.parse_args()
    run = MeasuredRun.start()
    with tee_stdout() as printed:
        problem = allocopt.CBMAIProblem.from_reference("cbmai-d2p")
        lp_timings(problem)
        run_timings(problem)
        appendix_c(args.sample, args.jobs, args.full)
        if not args.skip_hardness:
            hardness_table()
            uslp_consistency(args.uslp_runs, args.jobs)
    if args.write_docs:
        write_docs_section(args.docs, "cbmai-benchmarks", run, printed.getvalue().strip().splitlines())
        print(f"wrote its section of {args.docs}")


if __name__ == "__main__":
    main()
