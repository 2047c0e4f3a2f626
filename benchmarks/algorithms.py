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

4. (``--seed000``) Figure 1 of Wang, Yang, You (2022) with every fixed-confidence rule of the paper,
   ``--seed000-runs`` replications each (default 10^4), deltas 0.1, 0.01, 0.001, ``--jobs`` workers: the wall
   time of each rule and of the whole reproduction (goal: at most 30 minutes on a 2-core machine), the
   replication-steps and the cost per replication-step (CPU time with ``--jobs 1``, else wall time x jobs),
   and, below 10^4 replications, the time that 10^4 would take at the measured cost. ``--seed000-only`` skips parts 1-3.

Usage: ``python benchmarks/algorithms.py [--runs 10000] [--jobs 2] [--batch 1000] [--scalar-runs 10]
[--tas-runs 1000] [--tas-sample 2] [--seed000 [--seed000-runs N] [--seed000-only]] [--write-docs]``;
``--write-docs`` writes what it prints, with the date, the machine and the load, to
docs/algorithms_benchmark.md.

Full-size experiments (``--experiment NAME``, repeatable; then parts 1-3 are skipped): each runs at the size of the
paper, and this script records the wall time, the CPU time of the command and its joblib workers (the children
reaped by the time it exits) and the load average before and after, in docs/experiment_timings.md (one marked
section per experiment). Goal: at most 20 minutes each on a 2-core machine.

* ``nsar``: Shahrampour and Tarokh (2017), Figure 2: 4000 runs per bar (``allocopt experiment run`` of the spec
  ``examples/experiments/nsar.toml`` into a new store; ``allocopt experiment report`` then writes its tables and
  figures);
* ``adaptive-topk``: Chen, Chen, Zhang, Zhou (2017), Figures 1-4: 200 runs per budget,
  AdaptiveTopK's fixed budget in both readings of a cut round against CLUCB-PAC, uniform allocation and OptMAI
  (``examples/adaptive_topk_experiment.py``, which writes its own figure and table);
* ``lil-lucb``: Jiang, Li, Qiao (2017), Figure 1: N up to 1024 with 50 runs per point (``allocopt experiment run``
  of the spec ``examples/experiments/lil_lucb.toml`` into a new store).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from allocopt import TopKProblem
from allocopt._scripts import MeasuredRun, progress_on_terminal, write_marked_section
from allocopt.algorithms import TrackAndStop, identify

THETA = 1.0 - np.arange(20) / 20.0
ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "algorithms_benchmark.md"
TIMINGS = ROOT / "docs" / "experiment_timings.md"
EXPERIMENTS = ("nsar", "adaptive-topk", "lil-lucb")


SEED000_FIGURE_1_RULES = ("kkt-ts", "dt-ts", "bts", "track-and-stop", "ocba-balanced", "ocba-unbalanced", "lucb",
                          "kl-lucb", "kl-elimination", "ugape", "uniform")
SEED000_GOAL_SECONDS = 30 * 60
FULL_RUNS = 10_000


def per_step(result) -> float:
    return result.time / result.replication_steps * 1e9


def seed000_figure_1(emit, problem: TopKProblem, runs: int, jobs: int) -> None:
    """Part 4: Figure 1 of Wang, Yang, You (2022) with every fixed-confidence rule, each rule timed."""
    emit(f"\n4. Wang, Yang, You (2022) Figure 1, every fixed-confidence rule, {runs} replications each, deltas "
         f"(0.1, 0.01, 0.001), n_jobs={jobs}, common random numbers (rng=2022)")
    total_wall, total_full = 0.0, 0.0
    for name in SEED000_FIGURE_1_RULES:
        cpu_started = time.process_time()
        result = identify(problem, name, n_runs=runs, rng=2022, n_jobs=jobs)
        load = os.getloadavg()[0]
        # with one job the rule runs in this process: its CPU time; with more, the wall time x jobs (an upper
        # bound of the CPU time, equal to it on an otherwise idle machine)
        busy = time.process_time() - cpu_started if jobs == 1 else result.time * jobs
        cpu_per_step = busy / result.replication_steps * 1e6
        full = result.time * FULL_RUNS / runs
        total_wall += result.time
        total_full += full
        means = ", ".join(f"{value:.0f}" for value in result.stopping_times.mean(axis=0))
        emit(f"  {name:16s} {result.time:8.1f} s  {result.replication_steps:.3g} replication-steps  "
             f"{cpu_per_step:6.2f} us {'CPU' if jobs == 1 else 'wall x jobs'} per replication-step  E[tau] {means}  load {load:.1f}"
             + ("" if runs >= FULL_RUNS else f"  -> {full:.0f} s at {FULL_RUNS} replications"))
    emit(f"  whole reproduction: {total_wall:.0f} s for {runs} replications per rule"
         + ("" if runs >= FULL_RUNS else f"; {total_full:.0f} s at {FULL_RUNS} at the measured costs")
         + f" (goal {SEED000_GOAL_SECONDS} s at {FULL_RUNS})")


def experiment_command(name: str, jobs: int) -> list[str]:
    """The command and its full-size arguments for one experiment of :data:`EXPERIMENTS` (a spec is run into a new
    store, so that every chunk is computed)."""
    if name == "adaptive-topk":
        return ["examples/adaptive_topk_experiment.py", "--runs", "200", "--jobs", str(jobs),
                "--block-cut", "water-fill,arm-order"]
    spec = {"nsar": "examples/experiments/nsar.toml", "lil-lucb": "examples/experiments/lil_lucb.toml"}[name]
    return ["-m", "allocopt", "experiment", "run", spec, "--jobs", str(jobs),
            "--store", tempfile.mkdtemp(prefix=f"allocopt-{name}-") + "/store"]


def time_experiment(name: str, command: list[str]) -> str:
    """Run one full-size experiment command; return a sentence with its provenance (date, machine, load, versions:
    :class:`allocopt._scripts.MeasuredRun`) and the CPU time of the script and its reaped workers."""
    run = MeasuredRun.start()
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    completed = subprocess.run([sys.executable, *command], cwd=ROOT, check=False)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (children.ru_utime - children_before.ru_utime) + (children.ru_stime - children_before.ru_stime)
    status = "completed" if completed.returncode == 0 else f"FAILED (exit status {completed.returncode})"
    text = (f"{run.provenance(command='python ' + ' '.join(command))} The command {status}; CPU time of the "
            f"command and its reaped workers {cpu:.0f} s (goal: 20 minutes of wall-clock time).")
    print(text, flush=True)
    return text


def run_experiments(names: list[str], jobs: int) -> None:
    """Time each named full-size experiment and write its section of docs/experiment_timings.md."""
    for name in names:
        text = time_experiment(name, experiment_command(name, jobs))
        begin, end = f"<!-- timing-{name}:begin -->", f"<!-- timing-{name}:end -->"
        write_marked_section(TIMINGS, begin, end, "\n".join([begin, "", f"**{name}**: {text}", "", end]),
                             heading="# Full-size experiments: measured time\n\nWritten by "
                                     "`python benchmarks/algorithms.py --experiment NAME`; the figures and tables "
                                     "are written by `allocopt experiment report` (or the example script).\n")


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
    parser.add_argument("--seed000", action="store_true", help="part 4: Wang, Yang, You (2022) Figure 1, every rule")
    parser.add_argument("--seed000-runs", type=int, default=FULL_RUNS)
    parser.add_argument("--seed000-only", action="store_true", help="run part 4 only")
    parser.add_argument("--write-docs", action="store_true", help="write the figures to docs/algorithms_benchmark.md")
    parser.add_argument("--experiment", action="append", choices=EXPERIMENTS, default=[],
                        help="time a full-size experiment (repeatable); skips parts 1-3")
    args = parser.parse_args()
    if args.experiment:
        run_experiments(args.experiment, args.jobs)
        return
    run = MeasuredRun.start()
    problem = TopKProblem(THETA, 5, variance=0.25)
    emit(f"machine: {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} "
          f"(figures are measured under this load)")

    if args.seed000_only:
        args.skip_main = args.seed000 = True
    mean_tau = None
    if not args.skip_main:
        emit(f"\n1. KKT-TS, {args.runs} replications, deltas (0.1, 0.01, 0.001) from one run, n_jobs={args.jobs}")
        result = identify(problem, "kkt-ts", n_runs=args.runs, rng=0, n_jobs=args.jobs, progress=progress_on_terminal())
        emit(result.format_summary())
        emit(f"time {result.time:.1f} s (goal 180 s); {result.replication_steps:.3g} replication-steps; "
             f"{result.time * args.jobs / result.replication_steps * 1e9:.0f} ns per replication-step per worker")
        mean_tau = float(result.stopping_times[:, 1].mean())

    if args.seed000_only:
        seed000_figure_1(emit, problem, args.seed000_runs, args.jobs)
        finish(args, lines, run)
        return

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

    emit("\n3. Track-and-Stop (D-tracking, exact solver at every step), delta = 0.01")
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
    if args.seed000:
        seed000_figure_1(emit, problem, args.seed000_runs, args.jobs)
    finish(args, lines, run)


def finish(args, lines: list[str], run: MeasuredRun) -> None:
    """Write what was printed to docs/algorithms_benchmark.md when asked."""
    if args.write_docs:
        DOCS.write_text("\n".join(["# Identification engine: measured speed", "", run.provenance(), "",
                                    "```text", *lines, "```", ""]))
        print(f"wrote {DOCS}")


if __name__ == "__main__":
    main()
