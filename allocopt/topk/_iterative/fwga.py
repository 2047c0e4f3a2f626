r"""FWGA: Frank-Wolfe gradient ascent on the saddle point of :math:`\mu^\top C(\psi)` (Algorithm 1 of
Wang, Yang, You 2022; convergence in Theorem 3.7 and Appendix E.10).

Iteration :math:`t = 1, \dots, N`, with :math:`\alpha_t = 2/(t+1)` and :math:`\tau_t = c N^{3/2}/t`:

1. :math:`p_t = \arg\min_{p \in \Delta} \langle p, C(\psi_{t-1})\rangle` - the vertex of the currently
   smallest pair (ties: the first pair in row-major ``(top, bottom)`` order);
2. :math:`\mu_t = (1-\alpha_t)\mu_{t-1} + \alpha_t p_t`;
3. :math:`u_t = \mathrm{Proj}_{\Sigma_K}\big(u_{t-1} + \tau_t^{-1}\nabla_\psi \langle p_t, C(u_{t-1})\rangle\big)`;
4. :math:`\psi_t = (1-\alpha_t)\psi_{t-1} + \alpha_t u_t`.

The schedule is the paper's; its constant :math:`c` is instance dependent (the paper used :math:`c = 1` for
Example 1 and :math:`c = 10` for its Bernoulli example, Section D). By default allocopt takes
:math:`c = K^2\,\Gamma(\psi_{\mathrm{unif}})/2`: it is proportional to the scale of the costs, so the
iterates do not change when all costs are multiplied by a constant, and the :math:`K^2` reflects gradients
of order :math:`\Gamma K` acting on allocations of order :math:`1/K`. On Example 1 it gives :math:`c = 0.625`.
The gaps reached with several :math:`c`, the paper's among them, are measured by ``benchmarks/topk_iterative.py``
(its table is in docs/topk.md). Pass ``step_scale`` to reproduce a specific setting.

Each iterate is certified with :math:`U(\mu_t, \psi_t)` (linearised at the iterate; recorded in the
history), and the returned allocation with the refined certificate of
:mod:`allocopt.topk.certificate`, which equals the paper's objective optimality gap (21) at convergence of
the refinement. For Gaussian arms the loop runs as its compiled twin (:mod:`allocopt.topk._iterative.gaussian_kernels`: the same
operations in the same order, equal bit for bit, tested).
"""

from __future__ import annotations

import time

import numpy as np

from ..._validation import as_float, as_int
from .gaussian_kernels import fwga_kernel
from .history import GapRecorder
from ..simplex import project_to_simplex
from ..certificate import ROUNDING_ALLOWANCE
from ..problem import TopKProblem
from ..result import TopKResult, build_result

__all__ = ["solve", "OPTIONS"]

OPTIONS = {"iterations": 20_000, "step_scale": None, "tol": 1e-9}


def solve(problem: TopKProblem, kind: str, iterations: int = 20_000, step_scale: float | None = None,
          tol: float = 1e-9) -> TopKResult:
    """Run FWGA for ``iterations`` steps (stopping early once the certified relative gap is <= ``tol``)."""
    func = "solve_topk(method='fwga')"
    iterations = as_int(iterations, func, "iterations", low=1)
    if step_scale is None:
        uniform = np.full(problem.n_arms, 1.0 / problem.n_arms)
        step_scale = 0.5 * problem.n_arms**2 * float(problem.pair_terms(uniform, kind=kind).cost.min())
    step_scale = as_float(step_scale, func, "step_scale", low=0.0, low_open=True)
    tol = as_float(tol, func, "tol", low=0.0)
    started = time.perf_counter()

    n_arms, k = problem.n_arms, problem.k
    top, bottom = problem.top, problem.bottom
    n_columns = n_arms - k
    psi = np.full(n_arms, 1.0 / n_arms)
    u = psi.copy()
    mu = np.full((k, n_columns), 1.0 / (k * n_columns))
    recorder = GapRecorder(iterations, problem.evaluation_error(kind), max(problem.k, problem.n_arms - problem.k))
    horizon_factor = step_scale * iterations**1.5
    status = "iteration_limit"
    kernel = fwga_kernel() if problem.family.harmonic_costs(kind) else None
    if kernel is not None:  # the compiled twin of the loop below (same numbers, bit for bit)
        inverse = 1.0 / problem.dispersion
        recorder.count = kernel(problem.theta[top], problem.theta[bottom], inverse[top], inverse[bottom], top, bottom,
                                problem.dispersion, iterations, horizon_factor, tol, recorder.relative_error,
                                ROUNDING_ALLOWANCE, recorder.terms, psi, u, mu, recorder.values, recorder.bounds)
        value, bound = float(recorder.values[recorder.count - 1]), float(recorder.bounds[recorder.count - 1])
        if value > 0 and recorder.certified_gap(value, bound) <= tol * value:
            status = "optimal"
        iterations = 0  # the loop below has nothing left to do
    terms = problem.pair_terms(psi, kind=kind)
    for t in range(1, iterations + 1):
        flat = int(np.argmin(terms.cost))
        row, column = divmod(flat, n_columns)
        alpha = 2.0 / (t + 1)
        mu *= 1.0 - alpha
        mu[row, column] += alpha
        gradient = problem.pair_terms(u, [row], [column], kind=kind)
        step = t / horizon_factor
        u[top[row]] += step * gradient.grad_top[0]
        u[bottom[column]] += step * gradient.grad_bottom[0]
        u = project_to_simplex(u)
        psi = (1.0 - alpha) * psi + alpha * u
        terms = problem.pair_terms(psi, kind=kind)
        value, bound = recorder.record(terms, mu, 1.0)
        if value > 0 and recorder.certified_gap(value, bound) <= tol * value:
            status = "optimal"
            break
    return build_result(problem, kind, "fwga", psi, mu, iterations=recorder.count, started=started, tol=tol,
                        history=recorder.history(), status=status,
                        message=f"FWGA, {recorder.count} iterations, step scale c = {step_scale:g}")
