r"""KKT-Tracking (Algorithm 3 of Wang, Yang, You 2022; Lemma C.4).

Iteration :math:`t = 1, \dots, N` from :math:`\psi_0` uniform:

1. :math:`(i_t, j_t) = \arg\min_{i \in I, j \in J} C_{ij}(\psi_{t-1})` (ties: first pair in row-major order);
2. :math:`\psi_t = \frac{t-1}{t}\psi_{t-1} + \frac{1}{t}\big(h_{i;j}(\psi_{t-1}) e_i + h_{j;i}(\psi_{t-1}) e_j\big)`.

The multipliers are the pair frequencies :math:`\mu_t = \frac{1}{t}\sum_{s \le t} e_{(i_s, j_s)}`; Lemma C.4
shows :math:`\psi_t = \sum \mu h` along the run, i.e. the algorithm tracks the KKT equations (18a). Each
iterate is certified with :math:`U(\mu_t, \psi_t)`. At zero cost (an arm without allocation) the sampling
function takes its limit: all weight to the arm without allocation.
"""

from __future__ import annotations

import time

import numpy as np

from .._validation import as_float, as_int
from ._iterative import GapRecorder
from .problem import TopKProblem, sampling_function_top
from .result import TopKResult, build_result

__all__ = ["solve", "OPTIONS"]

OPTIONS = {"iterations": 10_000, "tol": 1e-9}


def solve(problem: TopKProblem, kind: str, iterations: int = 10_000, tol: float = 1e-9) -> TopKResult:
    """Run KKT-Tracking for ``iterations`` steps (stopping early once the certified relative gap is <= ``tol``)."""
    func = "solve_topk(method='kkt-tracking')"
    iterations = as_int(iterations, func, "iterations", low=1)
    tol = as_float(tol, func, "tol", low=0.0)
    started = time.perf_counter()

    n_arms, k = problem.n_arms, problem.k
    top, bottom = problem.top, problem.bottom
    n_columns = n_arms - k
    psi = np.full(n_arms, 1.0 / n_arms)
    counts = np.zeros((k, n_columns))
    recorder = GapRecorder(iterations, problem.evaluation_error(kind), max(problem.k, problem.n_arms - problem.k))
    terms = problem.pair_terms(psi, kind=kind)
    status = "iteration_limit"
    for t in range(1, iterations + 1):
        flat = int(np.argmin(terms.cost))
        row, column = divmod(flat, n_columns)
        i, j = top[row], bottom[column]
        h_top = sampling_function_top(terms.cost[row, column], terms.grad_top[row, column], psi[i], psi[j])
        psi *= (t - 1) / t
        psi[i] += float(h_top) / t
        psi[j] += (1.0 - float(h_top)) / t
        counts[row, column] += 1.0
        terms = problem.pair_terms(psi, kind=kind)
        value, bound = recorder.record(terms, counts, float(t))
        if value > 0 and recorder.certified_gap(value, bound) <= tol * value:
            status = "optimal"
            break
    return build_result(problem, kind, "kkt-tracking", psi, counts, iterations=recorder.count, started=started,
                        tol=tol, history=recorder.history(), status=status,
                        message=f"KKT-Tracking, {recorder.count} iterations")
