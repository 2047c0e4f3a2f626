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
import os
import statistics
import time
from pathlib import Path

import joblib
import numpy as np
from scipy.special import ndtr

import allocopt
from allocopt._scripts import MeasuredRun, progress_on_terminal, tee_stdout, write_docs_section
from allocopt.algorithms import cbmai_error_rate, sfsr, uslp

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cbmai.md"
INSTANCES = ("cbmai-d1p", "cbmai-d2p", "cbmai-d3p")
BUDGETS = (500, 1000, 2000, 4000, 8000)
ALGORITHMS = ("sfsr", "sfsr-l", "uslp")
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
    print(f"\n== {title}")


def lp_timings(problem: allocopt.CBMAIProblem) -> None:
    section(f"LP layer at K = {problem.n_arms}, L = {problem.n_costs} (instance D2P)")
    iv = median_time(lambda: allocopt.iv_scores(problem), 200)
    print(f"iv_scores, all {problem.n_columns} columns ({allocopt.enumerate_bases(problem).n_bases} bases): "
          f"{iv * 1e3:.3f} ms median of 200  (goal < 5 ms)")
    print(f"iv_scores(strict=True): {median_time(lambda: allocopt.iv_scores(problem, strict=True), 200) * 1e3:.3f} ms")
    print(f"enumerate_bases: {median_time(lambda: allocopt.enumerate_bases(problem), 200) * 1e3:.3f} ms")
    for method in allocopt.CBMAI_METHODS:
        seconds = median_time(lambda: allocopt.solve_cbmai(problem, method, diagnose=False), 50)
        print(f"solve_cbmai(method={method!r}, diagnose=False): {seconds * 1e3:.3f} ms")
    print(f"solve_cbmai() with Assumption 1 diagnostics: "
          f"{median_time(lambda: allocopt.solve_cbmai(problem), 50) * 1e3:.3f} ms")
    print(f"lagrangian_scores: {median_time(lambda: allocopt.lagrangian_scores(problem), 50) * 1e3:.3f} ms")


def run_timings(problem: allocopt.CBMAIProblem) -> None:
    section("one run at K = 24, L = 2 (D2P, N = 8000)")
    seeds = iter(range(10**6))
    for label, call in (("SFSR", lambda: sfsr(problem, 8000, rng=next(seeds))),
                        ("SFSR-L", lambda: sfsr(problem, 8000, score="lagrangian", rng=next(seeds))),
                        ("USLP", lambda: uslp(problem, 8000, rng=next(seeds)))):
        print(f"{label:7s} single run: {median_time(call, 30) * 1e3:.2f} ms median of 30")
    for algorithm in ALGORITHMS:
        rate = cbmai_error_rate(problem, algorithm, 8000, 1000, rng=1, n_jobs=1, chunk_size=250)
        print(f"{algorithm:7s} inside the vectorised harness (1 worker, chunks of 250): "
              f"{rate.time / 1000 * 1e3:.2f} ms per run")


def appendix_c(sample: int, jobs: int, full: bool) -> None:
    runs = PAPER_RUNS if full else sample
    section(f"Appendix C experiment: {len(ALGORITHMS)} algorithms x {len(BUDGETS)} budgets, "
            f"{runs} runs per point ({'full' if full else f'projected to {PAPER_RUNS}'}), loky, {jobs} workers")
    header = "instance  algorithm " + "".join(f"  N={budget:<14d}" for budget in BUDGETS)
    totals = {}
    with joblib.parallel_config(backend="loky", n_jobs=jobs):
        cbmai_error_rate(allocopt.CBMAIProblem.from_reference(INSTANCES[0]), "uslp", 500, 2 * jobs, rng=0)  # warm-up
        for name in INSTANCES:
            problem = allocopt.CBMAIProblem.from_reference(name)
            print(header)
            start = time.perf_counter()
            for algorithm in ALGORITHMS:
                cells = []
                for budget in BUDGETS:
                    rate = cbmai_error_rate(problem, algorithm, budget, runs, rng=2024, progress=progress_on_terminal())
                    cells.append(f"  {rate.error_rate:.4f}+-{(rate.ci_high - rate.ci_low) / 2:.4f}")
                print(f"{name[-3:].upper():9s} {algorithm:9s} " + "".join(f"{cell:<16s}" for cell in cells))
            totals[name] = time.perf_counter() - start
    print("error rate +- half-width of the 95% Clopper-Pearson interval")
    for name, seconds in totals.items():
        projected = seconds * PAPER_RUNS / runs
        print(f"{name[-3:].upper()}: {seconds:.1f} s measured for {runs * 15} runs -> "
              f"{projected / 60:.2f} min for 15 x {PAPER_RUNS} runs "
              f"(goal < 2 min; paper ~{PAPER_MINUTES_PER_INSTANCE:.0f} min per instance, "
              f"ratio {PAPER_MINUTES_PER_INSTANCE * 60 / projected:.0f}x)")


def hardness_table() -> None:
    section("cbmai_hardness (sigma_r = 1, sigma_c = 0.5)")
    print("instance  time (s)  lattice  Delta_0^2   Delta_(L+2)^2  (13) any consistent  (14) USLP   (15) SFSR")
    for name in INSTANCES:
        hardness = allocopt.cbmai_hardness(allocopt.CBMAIProblem.from_reference(name), 1.0, 0.5)
        print(f"{name[-3:].upper():9s} {hardness.time:8.1f}  {hardness.resolution:7d}  "
              f"{hardness.infeasibility_gap:.3e}  {hardness.sorted_gaps[3]:.3e}      "
              f"{hardness.consistent_exponent:.3e}          {hardness.uslp_exponent:.3e}  "
              f"{hardness.sfsr_exponent:.3e}")


def uslp_consistency(runs: int, jobs: int) -> None:
    problem = allocopt.CBMAIProblem.from_reference("cbmai-d2p")
    exponent = allocopt.cbmai_hardness(problem, 1.0, 0.5).uslp_exponent
    section(f"USLP on D2P against its exponent (14) e = {exponent:.3e}: error rate ({runs} runs) and Phi(-sqrt(2 e N))")
    with joblib.parallel_config(backend="loky", n_jobs=jobs):
        for budget in (8000, 32000, 128000):
            rate = cbmai_error_rate(problem, "uslp", budget, runs, rng=7, progress=progress_on_terminal())
            print(f"N = {budget:6d}: error rate {rate.error_rate:.3f} [{rate.ci_low:.3f}, {rate.ci_high:.3f}]   "
                  f"Phi(-sqrt(2 e N)) = {ndtr(-math.sqrt(2 * exponent * budget)):.3f}")


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
        print(f"allocopt {allocopt.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
              f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
        problem = allocopt.CBMAIProblem.from_reference("cbmai-d2p")
        lp_timings(problem)
        run_timings(problem)
        appendix_c(args.sample, args.jobs, args.full)
        if not args.skip_hardness:
            hardness_table()
            uslp_consistency(args.uslp_runs, args.jobs)
    if args.write_docs:
        write_docs_section(args.docs, "cbmai-benchmarks", run,
                           ["```text", *printed.getvalue().strip().splitlines(), "```"])
        print(f"wrote its section of {args.docs}")


if __name__ == "__main__":
    main()
