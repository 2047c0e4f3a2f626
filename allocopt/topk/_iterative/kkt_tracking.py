r"""``solve_topk(method="kkt-tracking")``: KKT-Tracking (:mod:`allocopt.topk.tracking`) with the certified gap of every
iterate, stopped early once it is at most ``tol``."""

from __future__ import annotations

import time

import numpy as np

from ..._validation import as_float, as_int
from ..certificate import ROUNDING_ALLOWANCE
from ..pairs import PairTerms
from ..problem import TopKProblem
from ..result import TopKResult, build_result
from ..tracking import TrackingIterations
from .gaussian_kernels import tracking_kernel
from .history import GapRecorder

__all__ = ["solve", "OPTIONS"]

OPTIONS = {"iterations": 10_000, "tol": 1e-9}


def solve(problem: TopKProblem, kind: str, iterations: int = 10_000, tol: float = 1e-9) -> TopKResult:
    """Run KKT-Tracking for ``iterations`` steps (stopping early once the certified relative gap is <= ``tol``)."""
    func = "solve_topk(method='kkt-tracking')"
    iterations = as_int(iterations, func, "iterations", low=1)
    tol = as_float(tol, func, "tol", low=0.0)
    started = time.perf_counter()

    run = TrackingIterations(problem.family, kind, problem.theta[None, :], problem.dispersion[None, :],
                             problem.top[None, :], problem.bottom[None, :])
    recorder = GapRecorder(iterations, problem.evaluation_error(kind), max(problem.k, problem.n_arms - problem.k))
    status = "iteration_limit"
    kernel = tracking_kernel() if problem.family.harmonic_costs(kind) else None
    if kernel is not None:  # the compiled twin of the loop below (same numbers, bit for bit)
        recorder.count = kernel(run.theta_top[0, :, 0], run.theta_bottom[0, 0, :], run.inverse_top[0, :, 0],
                                run.inverse_bottom[0, 0, :], problem.top, problem.bottom, problem.dispersion,
                                iterations, tol, recorder.relative_error, ROUNDING_ALLOWANCE, recorder.terms,
                                run.cumulative[0], np.empty(problem.n_arms), run.pair_counts[0], recorder.values,
                                recorder.bounds)
        run.t = recorder.count
        value, bound = float(recorder.values[recorder.count - 1]), float(recorder.bounds[recorder.count - 1])
        if value > 0 and recorder.certified_gap(value, bound) <= tol * value:
            status = "optimal"
        iterations = 0  # the loop below has nothing left to do
    for t in range(1, iterations + 1):
        run.step()
        terms = run.terms()
        value, bound = recorder.record(PairTerms(terms.cost[0], terms.grad_top[0], terms.grad_bottom[0],
                                                 terms.point[0]), run.pair_counts[0], float(t))
        if value > 0 and recorder.certified_gap(value, bound) <= tol * value:
            status = "optimal"
            break
    return build_result(problem, kind, "kkt-tracking", run.psi[0], run.pair_counts[0], iterations=recorder.count,
                        started=started, tol=tol, history=recorder.history(), status=status,
                        message=f"KKT-Tracking, {recorder.count} iterations")
