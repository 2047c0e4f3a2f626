"""The engine's cost per replication-step, compiled kernels against their numpy twins, measured in one run.

Instance: Wang, Yang, You (2022), Section 5: gaussian theta_i = 1 - (i-1)/20, i = 1..20, variance 1/4, k = 5;
KKT-TS, deltas 0.1, 0.01, 0.001 from one run, ``--runs`` replications (default 1024) in one chunk on one
worker. Each configuration runs in a fresh process, the configurations take turns (``--repeats`` rounds), so a
change of the machine's load hits them alike; the table gives the median over rounds and its ratio to the
compiled engine, measured in this run. The outcomes (stopping times, recommendations, pulls) of every
configuration are compared: they must be identical.

Configurations:

* ``compiled``: this checkout, with the compiled Gaussian kernels (the default engine);
* ``numpy``: this checkout with the kernels switched off (their numpy twins);
* ``baseline`` (with ``--baseline DIR``): the ``allocopt`` package of another source tree, e.g. an export of an
  earlier commit (``git archive COMMIT allocopt | tar -x -C DIR``).

The full experiment of ``benchmarks/algorithms.py`` (10^4 replications, two workers) makes about 1.1e8
replication-steps; the last column extrapolates its time from the measured cost per replication-step (an
estimate: chunks there hold about 1700 replications, and two workers share the machine).

Usage: ``python benchmarks/engine_speed.py [--runs 1024] [--repeats 2] [--baseline DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import hashlib, json, sys
import numpy as np
import allocopt
from allocopt import TopKProblem
from allocopt._scripts import progress_iter
from allocopt.algorithms import identify
mode, runs = sys.argv[1], int(sys.argv[2])
problem = TopKProblem(1.0 - np.arange(20) / 20.0, 5, variance=0.25)
def run(n):
    return identify(problem, "kkt-ts", n_runs=n, rng=0, n_jobs=1, chunk_size=n)
if mode == "numpy":
    from allocopt._numba import compiled_kernels
    switch = compiled_kernels(False)
    switch.__enter__()
run(4)  # warm-up: imports, and the compiled kernels' load from numba's cache (or their compilation)
result = run(runs)
digest = hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in
                                 (result.stopping_times, result.recommendations, result.pulls))).hexdigest()
print(json.dumps({"time": result.time, "steps": int(result.replication_steps), "digest": digest,
                  "package": allocopt.__file__}))
"""

FULL_REPLICATION_STEPS = 1.1e8
FULL_WORKERS = 2


def measure(mode: str, runs: int, source: Path) -> dict:
    environment = dict(os.environ, PYTHONPATH=str(source))
    output = subprocess.run([sys.executable, "-c", CHILD, mode, str(runs)], env=environment, cwd=source,
                            check=True, capture_output=True, text=True).stdout
    sample = json.loads(output.strip().splitlines()[-1])
    if not Path(sample["package"]).resolve().is_relative_to(source):
        raise SystemExit(f"the {mode} run imported {sample['package']}, not the package under {source}")
    return sample


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a source tree holding an allocopt package to compare with")
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    configurations = {"compiled": ("compiled", here), "numpy": ("numpy", here)}
    if args.baseline is not None:
        configurations["baseline"] = ("compiled", args.baseline.resolve())
    load_before = os.getloadavg()[0]
    samples: dict[str, list[dict]] = {name: [] for name in configurations}
    for _ in progress_iter(range(args.repeats), desc="rounds"):
        for name, (mode, source) in configurations.items():
            samples[name].append(measure(mode, args.runs, source))
    load_after = os.getloadavg()[0]
    print(f"KKT-TS, Wang, Yang, You (2022) instance, {args.runs} replications in one chunk, one worker, "
          f"{args.repeats} rounds; load average {load_before:.1f} before, {load_after:.1f} after "
          f"(figures are measured under this load)")
    cost = {name: statistics.median(s["time"] / s["steps"] * 1e9 for s in runs) for name, runs in samples.items()}
    print(f"{'configuration':14s}{'ns per replication-step':>26s}{'ratio to compiled':>20s}"
          f"{'full run, estimated':>22s}")
    for name in configurations:
        estimate = cost[name] * 1e-9 * FULL_REPLICATION_STEPS / FULL_WORKERS
        print(f"{name:14s}{cost[name]:26.0f}{cost[name] / cost['compiled']:20.2f}{estimate:20.0f} s")
    digests = {s["digest"] for runs in samples.values() for s in runs}
    steps = {s["steps"] for runs in samples.values() for s in runs}
    print(f"replication-steps per run: {sorted(steps)}; identical outcomes in every configuration: "
          f"{'yes' if len(digests) == 1 else 'NO'}")


if __name__ == "__main__":
    main()
