"""Per-rule cost of Figure 1, 4 or 5 of Wang, Yang, You (2022) from a short probe, and the estimate of the full figure.

Instance (``--figure``, default 1): the figure's instance in ``examples/wang_yang_you_experiments.py`` (Figure 1:
gaussian theta_i = 1 - (i-1)/20, i = 1..20, variance 1/4, k = 5, Section 5; Figure 4: Bernoulli theta = 0.9, 0.8,
..., 0.1, k = 3; Figure 5: Example 1). Each rule of the figure (the default rules of
``examples/wang_yang_you_experiments.py fixed-confidence --figure N``) runs ``--runs``
replications (``--runs-for NAME=N`` per rule) in this process (n_jobs = 1, one chunk), once per probe delta
(default 0.1 and 0.001), at lowered priority if the caller uses ``nice``, after a two-replication run that
compiles the rule's kernels (a cost paid once per worker in the full figure). For each run it prints the wall time, the
CPU time of this process, the load average when the run ended, the replication-steps and the CPU microseconds per
replication-step.

The estimate of the full figure (10^4 replications per rule, deltas 0.1, 0.01, 0.001, ``--jobs`` workers, default
2) is, per rule, CPU us per replication-step x replication-steps per replication x 10^4 / jobs:

* rules stopped by the Chernoff statistic serve every delta from one run, which lasts until delta = 0.001 stops:
  the probe at the smallest delta gives both figures;
* rules with their own stopping rule run one delta at a time: the figure's cost is the sum over the three deltas,
  with delta = 0.01 taken as the mean of the 0.1 and 0.001 probes (the sample complexity is close to linear in
  log 1/delta).

It assumes the workers have a core each; on a loaded machine the wall time grows accordingly. Asserts nothing.

Usage: ``nice -n 10 python benchmarks/figure1_probe.py [--figure 4] [--runs 1000] [--runs-for dt-ts=200] [--rules ...]``
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import time
from pathlib import Path

from allocopt.algorithms import identify
from allocopt.algorithms.engine.protocol import get_policy

FULL_RUNS = 10_000
GOAL_MINUTES = {1: 30}  # the goal of the full figure (Figure 1: the 30 minutes)


def experiments_module():
    """``examples/wang_yang_you_experiments.py`` (the figures' instances and rules are defined there once)."""
    path = Path(__file__).resolve().parent.parent / "examples" / "wang_yang_you_experiments.py"
    spec = importlib.util.spec_from_file_location("wang_yang_you_experiments", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def runs_per_rule(default: int, overrides: list[str] | None) -> dict[str, int]:
    runs = {"dt-ts": max(1, default // 5)}
    for item in overrides or []:
        name, _, value = item.partition("=")
        runs[name] = int(value)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figure", type=int, choices=(1, 4, 5), default=1)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--runs-for", action="append", metavar="NAME=N",
                        help="replications of one rule (default: DT-TS runs --runs / 5)")
    parser.add_argument("--rules", nargs="*", help="rule names (default: the figure's rules)")
    parser.add_argument("--deltas", type=float, nargs="*", default=[0.1, 0.001])
    parser.add_argument("--jobs", type=int, default=2, help="workers of the full figure (for the estimate)")
    parser.add_argument("--rng", type=int, default=2022)
    args = parser.parse_args()
    experiments = experiments_module()
    problem = experiments.FIGURES[args.figure][1]()
    rules = args.rules or experiments.FIXED_CONFIDENCE_RULES[args.figure]
    runs = runs_per_rule(args.runs, args.runs_for)
    deltas = sorted(args.deltas, reverse=True)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; start {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    print(f"{'rule':16s} {'delta':>6s} {'runs':>5s} {'wall s':>8s} {'CPU s':>8s} {'load':>5s} {'rep-steps':>11s} "
          f"{'steps/run':>9s} {'CPU us/step':>11s}", flush=True)
    total = 0.0
    estimates: dict[str, float] = {}
    for name in rules:
        n_runs = runs.get(name, args.runs)
        probe: dict[float, tuple[float, float]] = {}
        identify(problem, name, delta=deltas[0], n_runs=2, rng=args.rng + 1, n_jobs=1)  # compiles the kernels
        for delta in deltas:
            wall_started, cpu_started = time.perf_counter(), time.process_time()
            result = identify(problem, name, delta=delta, n_runs=n_runs, rng=args.rng, n_jobs=1)
            wall, cpu = time.perf_counter() - wall_started, time.process_time() - cpu_started
            steps = result.replication_steps
            per_step = cpu / steps * 1e6
            probe[delta] = (per_step, steps / n_runs)
            print(f"{name:16s} {delta:6g} {n_runs:5d} {wall:8.1f} {cpu:8.1f} {os.getloadavg()[0]:5.2f} {steps:11d} "
                  f"{steps / n_runs:9.0f} {per_step:11.3f}", flush=True)
        rule = get_policy(name, "figure1_probe")
        per_delta = getattr(rule, "delta_dependent", False) or getattr(rule, "stopping", "glr") == "rule"
        costs = {delta: per_step * steps_per_run for delta, (per_step, steps_per_run) in probe.items()}
        if per_delta and len(costs) >= 2:
            # one run per delta; delta = 0.01 between the two probes
            replication_cost = sum(costs.values()) + (costs[deltas[0]] + costs[deltas[-1]]) / 2
        else:
            replication_cost = costs[deltas[-1]]
        estimates[name] = replication_cost * 1e-6 * FULL_RUNS / args.jobs
        total += estimates[name]
    print(f"\nestimate of Figure {args.figure} at {FULL_RUNS} replications per rule, n_jobs = {args.jobs} "
          "(a core per worker):")
    for name, seconds in sorted(estimates.items(), key=lambda item: -item[1]):
        print(f"  {name:16s} {seconds:7.0f} s")
    goal = f" (goal {GOAL_MINUTES[args.figure]} min)" if args.figure in GOAL_MINUTES else ""
    print(f"  {'total':16s} {total:7.0f} s = {total / 60:.1f} min{goal}; end load average "
          f"{os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
