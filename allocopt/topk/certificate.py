r"""The optimality certificate shared by every top-k solver and every test.

Weak duality. For any multipliers :math:`\mu \ge 0` on the pairs with :math:`\sum \mu = 1`, the function
:math:`f(\psi) = \sum_{ij} \mu_{ij} C_{ij}(\psi)` is concave and 1-homogeneous, and each :math:`C_{ij}` is an
infimum of linear functions of :math:`\psi`:

.. math::
    C_{ij}(\psi') \le \psi'_i \, d(\theta_i, m_{ij}) + \psi'_j \, d(\theta_j, m_{ij})
    \quad \text{for every point } m_{ij}.

Taking :math:`m_{ij}` at the infimum for the current allocation :math:`\psi` (so the coefficients are the
partial derivatives :math:`\partial_a C_{ij}(\psi)`) and maximising over the simplex,

.. math::
    \Gamma^* \le \max_{\psi' \in \Sigma_K} f(\psi') \le U(\mu, \psi) =
    \max_a \sum_{\text{pairs } p \ni a} \mu_p \, \partial_a C_p(\psi).

Hence :math:`U(\mu, \psi) - \Gamma(\psi) \ge \Gamma^* - \Gamma(\psi)` is a *certified* optimality gap of
:math:`\psi`, whatever :math:`\mu` is (Wang, Yang, You 2022, Prop. 3.6). It is tight at a KKT point (equations (65): every arm's
sum equals :math:`\Gamma^*`). The same holds for the budget costs :math:`B_{ij}` with
:math:`\partial_a B_{ij} = d(x_{ij}, \theta_a)`.

Refinement. Because the bound holds for *any* linearisation point, :func:`certify` also evaluates it at
:math:`\psi_0 \approx \arg\max_{\psi \in \Sigma_K} f(\psi)` (a smooth concave problem solved by a few
equality-constrained Newton steps, one mass constraint per connected component of the support of
:math:`\mu`) and keeps the smaller bound. At that point :math:`U(\mu, \psi_0) = g(\mu) =
\max_\psi f(\psi)`, the dual function of Proposition 3.6, so the certified gap becomes the paper's
objective optimality gap (21), :math:`g(\mu) - \Gamma(\psi)`: second order in the errors of
:math:`(\mu, \psi)` instead of first order. (An interior-point solution has :math:`\Gamma(\psi)` accurate
to the solver tolerance but :math:`\psi` only to its square root along the flat directions, so the
unrefined bound would be far looser than the answer.)

Evaluation error. :math:`\Gamma(\psi)` and :math:`U` are floating-point evaluations of pair costs and
gradients, each within a relative error :math:`\epsilon` of the true value, where :math:`\epsilon` is the
family's derived bound for the instance's means
(:meth:`~allocopt.topk.TopKProblem.evaluation_error`; a few dozen ulps, more for budget costs of means whose
natural parameters spread widely). The per-arm sums of :math:`U` add one rounding per term. The reported gap
is :math:`\max(U - \Gamma, 0) + \epsilon (U + \Gamma) + n\,\varepsilon_{\mathrm{mach}} U` (:math:`n` the
largest number of terms in an arm's sum), so that it is never below the true gap
:math:`U_{\mathrm{true}} - \Gamma_{\mathrm{true}}` because of rounding, and the reported value is within
:math:`\epsilon\,\Gamma` of the true :math:`\Gamma(\psi)`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .._threads import single_blas_thread
from ._graph import connected_components
from .multipliers import PairMultipliers
from .problem import TopKProblem

__all__ = ["Certificate", "certify", "upper_bound", "dual_refinement", "refined_bound", "certified_gap"]

ROUNDING_ALLOWANCE = 16 * np.finfo(float).eps
_EPS = float(np.finfo(float).eps)
# the refinement only matters when the linearised bound is loose (interior-point or iterative solutions); at an
# exact KKT point the linearised gap is at rounding level and the refinement would cost a sparse solve for nothing
REFINEMENT_THRESHOLD = 1e-10


@dataclass(frozen=True)
class Certificate:
    r"""Optimality certificate of an allocation :math:`\psi` with multipliers :math:`\mu`.

    A bundle of numbers that results carry (:class:`~allocopt.topk.TopKResult`,
    :class:`~allocopt.topk.TopKCertificate`), not a result itself: :func:`certify` is a pure evaluation with no
    method, status or timing of its own.

    Attributes
    ----------
    value : float
        :math:`\Gamma(\psi)`.
    upper_bound : float
        :math:`U(\mu, \psi) \ge \Gamma^*`.
    gap : float
        Certified bound on :math:`\Gamma^* - \Gamma(\psi)`: ``upper_bound - value`` plus the rounding
        allowance.
    stationarity : float
        Relative residual of the KKT equations (65):
        :math:`\max_a |\sum_{p \ni a}\mu_p \partial_a C_p(\psi) - \Gamma(\psi)| / \Gamma(\psi)`.
    complementarity : float
        Relative complementary slackness :math:`\sum_p \mu_p (C_p(\psi) - \Gamma(\psi)) / \Gamma(\psi)`.
    """

    value: float
    upper_bound: float
    gap: float
    stationarity: float
    complementarity: float

    @property
    def relative_gap(self) -> float:
        """``gap / value`` (infinite when the value is zero)."""
        return self.gap / self.value if self.value > 0 else np.inf


class _ArmSums(NamedTuple):
    """Per-arm sums of mu_p * d_a C_p(psi) (top arms, bottom arms, in ``top`` / ``bottom`` order), and the
    multipliers and pair costs on the support of mu."""

    top: np.ndarray
    bottom: np.ndarray
    weights: np.ndarray
    costs: np.ndarray


def _arm_sums(problem: TopKProblem, psi: np.ndarray, multipliers: PairMultipliers, kind: str) -> _ArmSums:
    """Per-arm sums of mu_p * d_a C_p(psi) over the support of mu, and the pair costs there."""
    rows, cols, weights = multipliers.rows, multipliers.cols, multipliers.values
    terms = problem.pair_terms(psi, rows, cols, kind=kind)
    top_sums = np.bincount(rows, weights=weights * terms.grad_top, minlength=problem.k)
    bottom_sums = np.bincount(cols, weights=weights * terms.grad_bottom, minlength=problem.n_arms - problem.k)
    return _ArmSums(top_sums, bottom_sums, weights, terms.cost)


def scalar_certified_gap(bound: float, value: float, relative_error: float, terms: int) -> float:
    """:func:`certified_gap` of one pair of floats, with the same operations in the same order as its array form
    (plain Python, so that a compiled run loop can compile it too).

    Examples
    --------
    >>> bool(scalar_certified_gap(1.0, 0.5, 0.0, 1) == certified_gap(np.array([1.0]), np.array([0.5]))[0])
    True
    """
    allowance = (max(relative_error, ROUNDING_ALLOWANCE) * (abs(bound) + abs(value))
                 + max(terms, 1) * _EPS * abs(bound))
    return max(bound - value, 0.0) + allowance


def certified_gap(bound, value, relative_error: float = ROUNDING_ALLOWANCE, terms: int = 1):
    """``bound - value`` (clipped at zero) plus the allowance for evaluation error: ``relative_error`` (the
    instance's :meth:`~allocopt.topk.TopKProblem.evaluation_error`) on both, and one rounding per term of the
    largest per-arm sum of the bound; scalars or arrays."""
    if type(bound) is float and type(value) is float:  # one pair of numbers: the same formula on Python floats
        return scalar_certified_gap(bound, value, relative_error, terms)
    bound, value = np.asarray(bound, dtype=float), np.asarray(value, dtype=float)
    magnitude_bound, magnitude_value = np.abs(bound), np.abs(value)
    allowance = (max(relative_error, ROUNDING_ALLOWANCE) * (magnitude_bound + magnitude_value)
                 + max(terms, 1) * np.finfo(float).eps * magnitude_bound)
    gap = np.maximum(bound - value, 0.0) + allowance
    return float(gap) if gap.ndim == 0 else gap


def _largest_arm_degree(problem: TopKProblem, multipliers: PairMultipliers) -> int:
    """The largest number of pairs of the multipliers' support that contain one arm."""
    if multipliers.size == 0:
        return 1
    return int(max(np.bincount(multipliers.rows).max(), np.bincount(multipliers.cols).max()))


def upper_bound(problem: TopKProblem, psi: np.ndarray, mu, kind: str = "confidence") -> float:
    r""":math:`U(\mu, \psi)`, an upper bound on :math:`\Gamma^*` valid for any :math:`\mu \ge 0` (normalised
    to sum one here; dense, scipy sparse or :class:`~allocopt.topk.multipliers.PairMultipliers`) and any
    allocation :math:`\psi`."""
    multipliers = PairMultipliers.from_any(mu)
    if multipliers.size == 0:
        return np.inf
    sums = _arm_sums(problem, psi, multipliers, kind)
    return float(max(sums.top.max(), sums.bottom.max()))




def _newton_step(terms, weights: np.ndarray, local_top: np.ndarray, local_bottom: np.ndarray, incidence,
                 gradient: np.ndarray) -> np.ndarray | None:
    r"""The Newton step of :func:`dual_refinement` (the KKT system of :math:`\max f` under one unit-mass
    constraint per component, ``incidence`` the arms-by-components matrix), or ``None`` when the system is
    singular or the step not finite."""
    from scipy.sparse import bmat, coo_matrix
    from scipy.sparse.linalg import MatrixRankWarning, spsolve

    n_vars, n_components = incidence.shape
    hessian = coo_matrix(
        (np.concatenate([weights * terms.hess_top, weights * terms.hess_bottom,
                         weights * terms.hess_cross, weights * terms.hess_cross]),
         (np.concatenate([local_top, local_bottom, local_top, local_bottom]),
          np.concatenate([local_top, local_bottom, local_bottom, local_top]))),
        shape=(n_vars, n_vars)).tocsc()
    system = bmat([[hessian, incidence], [incidence.T, None]], format="csc")
    rhs = np.concatenate([-gradient, np.zeros(n_components)])
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", MatrixRankWarning)
            solution = spsolve(system, rhs)
    except (RuntimeError, ValueError):
        return None
    step = solution[:n_vars]
    return step if np.all(np.isfinite(step)) else None


def dual_refinement(problem: TopKProblem, psi: np.ndarray, mu: Any, kind: str = "confidence",
                    max_steps: int = 30) -> tuple[float, np.ndarray]:
    r"""Tightest linearised bound :math:`\min_{\psi_0} U(\mu, \psi_0)` found by Newton's method.

    Maximises :math:`f(\psi) = \sum_p \mu_p C_p(\psi)` over the allocations of the arms covered by the
    support of :math:`\mu`, one unit-mass constraint per connected component (gradients are 0-homogeneous
    per component, so only directions within components matter), starting from ``psi``. Every iterate
    gives a valid bound; the smallest is returned with its linearisation point. The steps stay inside the
    positive orthant, so the bound reaches :math:`g(\mu)` when the maximiser is interior - the case near an
    optimum, where the certificate is needed; for arbitrary :math:`\mu` it is valid but may be looser.

    Returns
    -------
    bound : float
        :math:`U(\mu, \psi_0) \ge \Gamma^*` (``inf`` when ``mu`` is zero).
    psi0 : ndarray, shape (K,)
        The linearisation point (component masses normalised to one; arms outside the support keep ``psi``).
    """
    from scipy.sparse import csc_matrix

    multipliers = PairMultipliers.from_any(mu)
    if multipliers.size == 0:
        return np.inf, np.asarray(psi, dtype=float).copy()
    rows, cols, weights = multipliers.rows, multipliers.cols, multipliers.values
    top, bottom = problem.top[rows], problem.bottom[cols]
    labels = connected_components(problem.n_arms, top, bottom).labels  # of the support graph, over all K arms
    arms = np.unique(np.concatenate([top, bottom]))
    position = np.full(problem.n_arms, -1)
    position[arms] = np.arange(arms.size)
    component_ids, component_of = np.unique(labels[arms], return_inverse=True)
    n_vars, n_components = arms.size, component_ids.size
    local_top, local_bottom = position[top], position[bottom]
    incidence = csc_matrix((np.ones(n_vars), (np.arange(n_vars), component_of)), shape=(n_vars, n_components))

    current = np.maximum(np.asarray(psi, dtype=float)[arms], 0.0)
    masses = np.bincount(component_of, weights=current, minlength=n_components)
    bad = masses[component_of] <= 0
    current = np.where(bad, 1.0, current)
    masses = np.bincount(component_of, weights=current, minlength=n_components)
    current = current / masses[component_of]

    def evaluate(point, second_order):
        full = np.zeros(problem.n_arms)
        full[arms] = point
        terms = problem.pair_terms(full, rows, cols, kind=kind, second_order=second_order)
        gradient = (np.bincount(local_top, weights=weights * terms.grad_top, minlength=n_vars)
                    + np.bincount(local_bottom, weights=weights * terms.grad_bottom, minlength=n_vars))
        objective = float(np.dot(weights, terms.cost))
        return objective, gradient, terms

    component_masses = np.bincount(component_of[local_top], weights=weights, minlength=n_components)

    def split_bound(gradient):
        """min over re-splittings of mu's mass between components of max_a d_a f (see module docstring)."""
        peaks = np.full(n_components, -np.inf)
        np.maximum.at(peaks, component_of, gradient)
        if np.any(peaks <= 0):
            return float(gradient.max())
        return float(min(gradient.max(), 1.0 / np.sum(component_masses / peaks)))

    objective, gradient, terms = evaluate(current, True)
    best_bound, best_point = split_bound(gradient), current.copy()
    for _ in range(max_steps):
        step = _newton_step(terms, weights, local_top, local_bottom, incidence, gradient)
        if step is None:  # singular system: keep the best bound found so far
            break
        # fraction to the boundary keeps every covered arm's allocation positive
        shrinking = step < 0
        length = 1.0
        if np.any(shrinking):
            length = min(1.0, 0.99 * float(np.min(-current[shrinking] / step[shrinking])))
        improved = False
        for _ in range(30):
            candidate = current + length * step
            candidate_objective, candidate_gradient, candidate_terms = evaluate(candidate, True)
            if candidate_objective >= objective - 1e-15 * abs(objective):
                improved = True
                break
            length *= 0.5
        if not improved:
            break
        current, objective, gradient, terms = candidate, candidate_objective, candidate_gradient, candidate_terms
        bound = split_bound(gradient)
        if bound < best_bound:
            best_bound, best_point = bound, current.copy()
        if float(gradient.max()) - objective <= 4 * np.finfo(float).eps * abs(objective):
            break
    psi0 = np.asarray(psi, dtype=float).copy()
    psi0[arms] = best_point
    return best_bound, psi0


def refined_bound(problem: TopKProblem, psi: np.ndarray, mu, kind: str = "confidence",
                  thresholds: tuple[float, ...] = (0.0, 1e-9, 1e-6)) -> float:
    r"""The smallest :func:`dual_refinement` bound over ``mu`` and copies of ``mu`` with the entries below
    ``threshold * max(mu)`` removed (every nonnegative :math:`\mu` gives a valid bound; dropping the tiny
    multipliers an interior-point solver leaves on non-binding pairs restores the component structure)."""
    multipliers = PairMultipliers.from_any(mu)
    if multipliers.size == 0:
        return np.inf
    best = np.inf
    seen = set()
    for threshold in thresholds:
        kept = multipliers.above(threshold)
        if kept.size in seen:
            continue
        seen.add(kept.size)
        with single_blas_thread():  # sparse factorisations: BLAS threads only cost here
            best = min(best, dual_refinement(problem, psi, kept, kind)[0])
    return best


def certify(problem: TopKProblem, psi: np.ndarray, mu, kind: str = "confidence",
            value: float | None = None, refine: bool = True) -> Certificate:
    r"""The certificate of ``psi`` (shape (K,)) with multipliers ``mu`` (dense (k, K-k), scipy sparse, or
    :class:`~allocopt.topk.multipliers.PairMultipliers`).

    ``value`` may pass a precomputed :math:`\Gamma(\psi)` (it is recomputed over all pairs otherwise).
    With ``refine=True`` (default) the upper bound is the smaller of :math:`U(\mu, \psi)` and the refined
    bound of :func:`refined_bound`, computed when the linearised relative gap exceeds
    ``REFINEMENT_THRESHOLD``.
    """
    psi = np.asarray(psi, dtype=float)
    multipliers = PairMultipliers.from_any(mu)
    if value is None:
        value = problem.minimum_cost(psi, kind)[0]
    if multipliers.size == 0:
        return Certificate(value, np.inf, np.inf, np.inf, np.inf)
    sums = _arm_sums(problem, psi, multipliers, kind)
    top_sums, bottom_sums = sums.top, sums.bottom
    bound = float(max(top_sums.max(), bottom_sums.max()))
    if refine and bound - value > REFINEMENT_THRESHOLD * abs(value):
        bound = min(bound, refined_bound(problem, psi, multipliers, kind))
    gap = certified_gap(bound, value, problem.evaluation_error(kind), _largest_arm_degree(problem, multipliers))
    scale = value if value > 0 else np.inf
    stationarity = float(max(np.abs(top_sums - value).max(), np.abs(bottom_sums - value).max()) / scale)
    complementarity = float(np.dot(sums.weights, sums.costs - value) / scale)
    return Certificate(value, bound, gap, stationarity, complementarity)
