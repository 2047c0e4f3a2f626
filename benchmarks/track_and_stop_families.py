"""Track-and-Stop's compiled step against its Python step on the families without a closed form, side by side.

For each instance (Figure 4's Bernoulli instance of Wang, Yang, You (2022), a Poisson and an exponential one),
``identify`` with ``TrackAndStop()`` (the compiled step: the batch's double star in the step kernel) and with the
same rule whose ``compiled_step`` is None (the Python step: one ``solve_topk_batch`` call per step on every due
run), in turns, ``--repeats`` times each; the table gives the smallest CPU microseconds per replication-step of
each and their ratio. Both give the same runs bit for bit (tests/algorithms/test_engine_runs.py).

Measure on an idle machine, with no OMP/OPENBLAS thread variables set.

Usage: ``python benchmarks/track_and_stop_families.py [--runs 100] [--repeats 2]``
"""

from __future__ import annotations

import argparse
import time

from allocopt import TopKProblem
from allocopt.algorithms import TrackAndStop, identify

PROBLEMS = {
    "bernoulli 0.9, 0.8, ..., 0.1, k = 3 (Figure 4)": TopKProblem([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1], 3,
                                                                  family="bernoulli"),
    "poisson 3, 2.5, 2, 1, 0.5, k = 2": TopKProblem([3.0, 2.5, 2.0, 1.0, 0.5], 2, family="poisson"),
    "exponential 3, 2.5, 2, 1, 0.5, k = 2": TopKProblem([3.0, 2.5, 2.0, 1.0, 0.5], 2, family="exponential"),
}


class PythonTrackAndStop(TrackAndStop):
    """Track-and-Stop without its compiled step (every step in Python, batched)."""

    def compiled_step(self, context):
        return None


def per_step(problem: TopKProblem, rule, runs: int) -> float:
    """CPU microseconds per replication-step of one ``identify`` call (three deltas, one process)."""
    start = time.process_time()
    result = identify(problem, rule, delta=(0.1, 0.01, 0.001), n_runs=runs, rng=0, n_jobs=1)
    return 1e6 * (time.process_time() - start) / int(result.replication_steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    print(f"{'instance':46s} {'compiled us':>12s} {'Python us':>10s} {'ratio':>6s}")
    for name, problem in PROBLEMS.items():
        for rule in (TrackAndStop(), PythonTrackAndStop()):  # warm-up: the kernels' compilation or cache load
            identify(problem, rule, delta=0.1, n_runs=2, rng=0, n_jobs=1)
        compiled, python = [], []
        for _ in range(args.repeats):  # in turns
            compiled.append(per_step(problem, TrackAndStop(), args.runs))
            python.append(per_step(problem, PythonTrackAndStop(), args.runs))
        print(f"{name:46s} {min(compiled):12.2f} {min(python):10.2f} {min(python) / min(compiled):6.1f}")


if __name__ == "__main__":
    main()
