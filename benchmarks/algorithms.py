"""Benchmarks of the sequential identification engine. Prints figures measured in this run; asserts nothing.

Instance: Wang, Yang, You (2022), Section 5: gaussian theta_i = 1 - (i-1)/20, i = 1..20, variance 1/4, k = 5.

1. KKT-TS, ``--runs`` replications (default 10^4), deltas 0.1, 0.01, 0.001 from one run, ``--jobs`` workers
   (default 2); goal: at most 3 minutes on a 2-core machine.
2. Nanoseconds per replication-step: the batched engine (one chunk of ``--batch`` replications) against the
   scalar rule run one replication at a time (``--scalar-runs`` replications), KKT-TS and uniform.
3. Track-and-Stop, exact solver at every step, ``--tas-runs`` replications (default 1000) at delta = 0.01:
   the batched rule solves the allocations of all due replications with one ``solve_topk_batch`` call per
   step; the scalar rule (one ``solve_topk`` per step, warm-started) is timed on ``--tas-sample``
   replications for comparison.

Usage: ``python benchmarks/algorithms.py [--runs 10000] [--jobs 2] [--batch 1000] [--scalar-runs 10]
[--tas-runs 1000] [--tas-sample 2] [--write-docs]``; ``--write-docs`` writes what it prints, with the date,
the machine and the load, to docs/algorithms_benchmark.md.
"""

from __future__ import annotations

import argparse
import os
import platform
from pathlib import Path

import numpy as np

from allocopt import TopKProblem
from allocopt._scripts import MeasuredRun, progress_on_terminal
from allocopt.algorithms import TrackAndStop, identify

THETA = 1.0 - np.arange(20) / 20.0
DOCS = Path(__file__).resolve().parent.parent / "docs" / "algorithms_benchmark.md"


def per_step(result) -> float:
    return result.time / result.replication_steps * 1e9


def main() -> None:
    lines: list[str] = []

    def emit(text: str = "", **_: object) -> None:
        print(text, flush=True)
        lines.extend(str(text).splitlines() or [""])

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--scalar-runs", type=int, default=10)
    parser.add_argument("--tas-runs", type=int, default=1000)
    parser.add_argument("--tas-sample", type=int, default=2)
    parser.add_argument("--skip-main", action="store_true", help="skip part 1")
    parser.add_argument("--write-docs", action="store_true", help="write the figures to docs/algorithms_benchmark.md")
    args = parser.parse_args()
    run = MeasuredRun.start()
    problem = TopKProblem(THETA, 5, variance=0.25)
    emit(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} "
          f"(figures are measured under this load)")

    mean_tau = None
    if not args.skip_main:
        emit(f"\n1. KKT-TS, {args.runs} replications, deltas (0.1, 0.01, 0.001) from one run, n_jobs={args.jobs}")
        result = identify(problem, "kkt-ts", n_runs=args.runs, rng=0, n_jobs=args.jobs, progress=progress_on_terminal())
        emit(result.format_summary())
        emit(f"time {result.time:.1f} s (goal 180 s); {result.replication_steps:.3g} replication-steps; "
             f"{result.time * args.jobs / result.replication_steps * 1e9:.0f} ns per replication-step per worker")
        mean_tau = float(result.stopping_times[:, 1].mean())

    emit(f"\n2. ns per replication-step, batched ({args.batch} replications in one chunk) against scalar "
          f"({args.scalar_runs} replications, one at a time), one worker, delta = 0.01")
    for name in ("kkt-ts", "uniform"):
        batched = identify(problem, name, delta=0.01, n_runs=args.batch, rng=1, n_jobs=1, chunk_size=args.batch)
        scalar = identify(problem, name, delta=0.01, n_runs=args.scalar_runs, rng=1, n_jobs=1, chunk_size=1,
                          batched=False)
        emit(f"  {name:8s} batched {per_step(batched):8.0f} ns   scalar {per_step(scalar):8.0f} ns   "
             f"ratio {per_step(scalar) / per_step(batched):.1f}")
        if name == "kkt-ts" and mean_tau is None:
            mean_tau = float(batched.stopping_times[:, 0].mean())

    emit(f"\n3. Track-and-Stop (D-tracking, exact solver at every step), delta = 0.01")
    rule = TrackAndStop(solver="exact", update="every")
    sample = identify(problem, rule, delta=0.01, n_runs=args.tas_sample, rng=2, n_jobs=1, chunk_size=1,
                      batched=False)
    emit(f"  scalar rule, {args.tas_sample} replications one at a time: {per_step(sample) / 1e3:.0f} us per step "
         f"(one solve_topk per step, warm-started)")
    full = identify(problem, rule, delta=0.01, n_runs=args.tas_runs, rng=2, n_jobs=args.jobs,
                    progress=progress_on_terminal())
    emit(f"  batched rule, {args.tas_runs} replications, n_jobs={args.jobs}: {full.time:.1f} s, "
         f"{full.time * args.jobs / full.replication_steps * 1e9:.0f} ns per replication-step per worker; "
         f"fallbacks {int(full.diagnostics['solver_fallbacks'].sum())} of "
         f"{int(full.diagnostics['solver_calls'].sum())} solves")
    emit(full.format_summary())
    if args.write_docs:
        DOCS.write_text("\n".join(["# Identification engine: measured speed", "", run.provenance(), "",
                                    "```text", *lines, "```", ""]))
        print(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
