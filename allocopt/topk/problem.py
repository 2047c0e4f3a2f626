r"""The top-k optimal allocation problem.

For K arms with means :math:`\theta`, the top set :math:`I` (the k largest means) and the bottom set
:math:`J`, and an allocation :math:`\psi` in the simplex :math:`\Sigma_K`,

.. math::
    C_{ij}(\psi) = \inf_x \big[\psi_i d(\theta_i, x) + \psi_j d(\theta_j, x)\big], \qquad
    B_{ij}(\psi) = \inf_x \big[\psi_i d(x, \theta_i) + \psi_j d(x, \theta_j)\big],

.. math::
    \Gamma(\psi) = \min_{i \in I, j \in J} C_{ij}(\psi), \qquad \Gamma^* = \max_{\psi \in \Sigma_K} \Gamma(\psi),
    \qquad T^* = 1/\Gamma^*.

(Wang, Yang, You 2022, problems (5) and (11); ``kind="confidence"`` uses :math:`C`, ``kind="budget"`` uses
:math:`B`.) :class:`TopKProblem` holds an instance and evaluates these functions for all pairs at once.
"""

from __future__ import annotations

import math

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .._validation import as_choice, as_int, describe, fail
from ..exceptions import InvalidInstanceError
from ..families import ExponentialFamily, get_family
from .pairs import KINDS, PairTerms, allocation_pair_terms

__all__ = ["TopKProblem", "KINDS", "sampling_function_top"]


class TopKProblem:
    r"""A top-k identification instance: means, k and the reward family.

    Parameters
    ----------
    theta : array_like, shape (K,)
        Arm means (K >= 2), inside the family's mean domain. Ties inside the top set or inside the bottom set
        are allowed; a tie at the top-k boundary (:math:`\theta_{[k]} = \theta_{[k+1]}`) makes the problem
        undefined and raises :class:`~allocopt.InvalidInstanceError` naming the tied arms.
    k : int
        Size of the top set, ``1 <= k <= K-1``.
    family : str or ExponentialFamily, default "gaussian"
        ``"gaussian"``, ``"bernoulli"``, ``"poisson"``, ``"exponential"`` or a family object.
    variance : float or array_like, default 1.0
        Gaussian variance, one value or one per arm (heteroscedastic arms). Only for ``family="gaussian"``.

    Attributes
    ----------
    theta : ndarray, shape (K,)
        The means (read-only).
    k, n_arms : int
        k and K.
    family : ExponentialFamily
        The reward family.
    dispersion : ndarray, shape (K,)
        Per-arm dispersion :math:`\phi_a` (Gaussian variance, 1 otherwise).
    top : ndarray of int, shape (k,)
        Indices of the top arms :math:`I`, sorted by decreasing mean (ties by index): ``top[0]`` is
        :math:`i_1`, ``top[-1]`` is the worst top arm :math:`i_k`.
    bottom : ndarray of int, shape (K-k,)
        Indices of the bottom arms :math:`J`, sorted by decreasing mean: ``bottom[0]`` is the best bottom arm
        :math:`j_1`.

    Examples
    --------
    Example 1 of Wang, Yang, You (2022):

    >>> problem = TopKProblem([0.51, 0.5, 0, -0.01, -0.092], k=2, variance=0.25)
    >>> problem.top, problem.bottom
    (array([0, 1]), array([2, 3, 4]))

    At the uniform allocation the closest pair (0.5, 0) costs :math:`0.5^2 / (2 \cdot 0.25 \cdot (5 + 5)) = 0.05`:

    >>> round(problem.value(np.full(5, 0.2)), 6)
    0.05
    """

    def __init__(self, theta: ArrayLike, k: int, family: str | ExponentialFamily = "gaussian",
                 variance: ArrayLike = 1.0):
        func = "TopKProblem"
        resolved = get_family(family, variance=variance, func=func)
        means = resolved.validate_means(theta, func, "theta")
        n_arms = means.shape[0]
        if n_arms < 2:
            fail(func, "theta", "a vector of at least 2 arm means", means)
        k = as_int(k, func, "k", low=1, high=n_arms - 1,
                   requirement=f"an integer in 1..K-1 = 1..{n_arms - 1}")
        dispersion = resolved.arm_dispersion(n_arms, func)
        order = np.argsort(-means, kind="stable")
        boundary_top, boundary_bottom = means[order[k - 1]], means[order[k]]
        if not boundary_top > boundary_bottom:
            tied = np.flatnonzero(means == boundary_top)
            raise InvalidInstanceError(
                f"The 'theta' parameter of {func} must have a unique top-{k} set, i.e. the {_ordinal(k)} and "
                f"{_ordinal(k + 1)} largest means must differ. Got {describe(means)} instead: arms "
                f"{tied.tolist()} (0-based) are tied at {float(boundary_top)!r} across the top-{k} boundary."
            )
        # the package's validate_means and arm_dispersion return fresh arrays, as argsort does: made read-only in
        # place rather than copied (a family that overrides them may hand back an array its caller holds)
        family_type = type(resolved)
        if family_type.validate_means is not ExponentialFamily.validate_means:
            means = means.copy()
        if family_type.arm_dispersion is not ExponentialFamily.arm_dispersion:
            dispersion = np.array(dispersion, dtype=float)
        for array in (means, dispersion, order):
            array.setflags(write=False)
        self._theta = means
        self._k = k
        self._family = resolved
        self._dispersion = dispersion
        self._order = order
        self._top = order[:k]
        self._bottom = order[k:]
        # built on first use (a solve on the fast paths reads neither): the unit natural parameters, and the
        # broadcast-ready columns (top) and rows (bottom) of the full-grid evaluations
        self._eta: np.ndarray | None = None
        self._grids: tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]] | None = None
        self._evaluation_error: dict[str, float] = {}

    # ------------------------------------------------------------------------------------------ basics
    @property
    def theta(self) -> np.ndarray:
        return self._theta

    @property
    def k(self) -> int:
        return self._k

    @property
    def n_arms(self) -> int:
        return self._theta.shape[0]

    @property
    def family(self) -> ExponentialFamily:
        return self._family

    @property
    def dispersion(self) -> np.ndarray:
        return self._dispersion

    @property
    def order(self) -> np.ndarray:
        """Every arm by decreasing mean (ties by index): ``top`` followed by ``bottom``."""
        return self._order

    @property
    def top(self) -> np.ndarray:
        return self._top

    @property
    def bottom(self) -> np.ndarray:
        return self._bottom

    @property
    def n_pairs(self) -> int:
        """Number of (top, bottom) pairs, :math:`k(K-k)`."""
        return self._k * (self.n_arms - self._k)

    @property
    def unit_natural(self) -> np.ndarray:
        r"""Unit natural parameters :math:`\eta_1(\theta_a)` (used by the budget costs; read-only)."""
        eta = self._eta
        if eta is None:
            eta = self._eta = _readonly(self._family.unit_natural(self._theta))
        return eta

    def _full_grids(self) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """(theta, eta, 1/phi) of the top arms as columns and of the bottom arms as rows."""
        grids = self._grids
        if grids is None:
            eta, top, bottom = self.unit_natural, self._top, self._bottom
            grids = self._grids = (
                (self._theta[top][:, None], eta[top][:, None], 1.0 / self._dispersion[top][:, None]),
                (self._theta[bottom][None, :], eta[bottom][None, :], 1.0 / self._dispersion[bottom][None, :]))
        return grids

    def __repr__(self) -> str:
        return (f"TopKProblem(theta={describe(self._theta)}, k={self._k}, family={self._family!r})")

    # ------------------------------------------------------------------------------------- validation
    def boundary_gaps(self) -> np.ndarray:
        r"""The top-k gaps :math:`\Delta_a`: :math:`\theta_a - \theta_{j_1}` for top arms and
        :math:`\theta_{i_k} - \theta_a` for bottom arms (all positive, even for adjacent floating-point means)."""
        gaps = np.empty(self.n_arms)
        gaps[self._top] = self._theta[self._top] - self._theta[self._bottom[0]]
        gaps[self._bottom] = self._theta[self._top[-1]] - self._theta[self._bottom]
        return gaps

    def heuristic_allocation(self, kind: str = "confidence") -> np.ndarray:
        r"""A cheap starting allocation: :math:`\psi_a` inversely proportional to the cost, at unit allocations,
        of the pair of arm :math:`a` with the boundary arm across (:math:`j_1` for top arms, :math:`i_k` for
        bottom arms), normalised; :math:`\psi_a \propto 2\phi/\Delta_a^2` for Gaussian arms of a common
        variance :math:`\phi` (``boundary_gaps``). Formed as ratios to the largest weight, so that it stays
        finite and positive (down to :math:`10^{-300}`) whatever the scale of the costs."""
        ones = np.ones(self.n_arms)
        top_costs = self.pair_terms(ones, np.arange(self._k), np.zeros(self._k, dtype=int), kind=kind).cost
        bottom_costs = self.pair_terms(ones, np.full(self.n_arms - self._k, self._k - 1),
                                       np.arange(self.n_arms - self._k), kind=kind).cost
        costs = np.empty(self.n_arms)
        costs[self._top], costs[self._bottom] = top_costs, bottom_costs
        smallest = np.min(costs[costs > 0]) if np.any(costs > 0) else 1.0
        weights = np.clip(smallest / np.maximum(costs, smallest), 1e-300, 1.0)
        return weights / weights.sum()

    def cost_normalisation(self) -> tuple["TopKProblem", int]:
        r"""An equivalent instance whose costs are those of this one times :math:`2^{-e}`, and :math:`e`.

        For a family whose divergence is homogeneous of degree :math:`p` in the means
        (:attr:`~allocopt.families.ExponentialFamily.mean_scaling_degree`: 2 for Gaussian, 1 for Poisson arms,
        for both kinds), every cost is homogeneous of degree :math:`p` in the means and of degree :math:`-1` in
        the dispersion: scaling the means by :math:`2^{-a}` and, when the dispersion is a parameter of the family
        (:attr:`~allocopt.families.ExponentialFamily.has_dispersion_parameter`, the Gaussian variances), the
        dispersion by :math:`2^{-b}` (exact in floating point) scales every cost by :math:`2^{-pa+b}` and leaves
        allocations, multipliers and relative gaps unchanged. The solvers work on the scaled instance, whose
        largest mean (and dispersion) lies in [1/2, 1), so that means or variances near the ends of the
        floating-point range neither overflow nor underflow in intermediate quantities. Instances within
        :math:`2^{\pm 30}` of that, and families that declare no degree, are returned as they are (``e = 0``).

        Raises
        ------
        InvalidInstanceError
            When the means span more than the floating-point range can hold after scaling (the smallest
            nonzero means would vanish).
        """
        family = self._family
        degree = family.mean_scaling_degree
        if degree is None:
            return self, 0
        # (math.frexp on Python floats: the same exponents as np.frexp, at a fraction of the call overhead; the
        # largest and smallest means are the ends of the sorted order, a common dispersion its first entry)
        theta, order = self._theta, self._order
        mean_exponent = math.frexp(max(float(theta[order[0]]), -float(theta[order[-1]])))[1]
        if not family.has_dispersion_parameter:
            dispersion_exponent = 0
        elif family.is_heteroscedastic:
            dispersion_exponent = math.frexp(float(self._dispersion.max()))[1]
        else:
            dispersion_exponent = math.frexp(float(self._dispersion[0]))[1]
        if abs(mean_exponent) <= 30 and abs(dispersion_exponent) <= 60:
            return self, 0
        theta = np.ldexp(self._theta, -mean_exponent)
        vanished = (theta == 0) != (self._theta == 0)
        if np.any(vanished) or np.any(theta <= family.lower):
            raise InvalidInstanceError(
                f"The 'theta' parameter of TopKProblem must have means within the floating-point range of each "
                f"other (a ratio of at most about 1e300). Got {describe(self._theta)} instead: arms "
                f"{np.flatnonzero(vanished).tolist()} (0-based) vanish when the largest mean is scaled to 1.")
        if family.has_dispersion_parameter:
            dispersion = np.ldexp(self._dispersion, -dispersion_exponent)
            family = family.with_dispersion(dispersion if family.is_heteroscedastic else dispersion[0])
        return TopKProblem(theta, self._k, family), degree * mean_exponent - dispersion_exponent

    def check_kind(self, kind: str, func: str) -> str:
        """Validate a ``kind`` argument (``"confidence"`` or ``"budget"``)."""
        return as_choice(kind, func, "kind", KINDS)

    def check_allocation(self, psi: ArrayLike, func: str, name: str = "psi") -> np.ndarray:
        """A nonnegative finite vector of length K (not necessarily summing to one: costs are homogeneous)."""
        requirement = f"a nonnegative finite vector of length K = {self.n_arms}"
        try:
            array = np.array(psi, dtype=float, copy=True)
        except (TypeError, ValueError):
            fail(func, name, requirement, psi)
        if array.shape != (self.n_arms,) or not np.all(np.isfinite(array)) or np.any(array < 0):
            fail(func, name, requirement, psi)
        return array

    # ---------------------------------------------------------------------------------------- costs
    def evaluation_error(self, kind: str = "confidence") -> float:
        r"""A bound on the relative rounding error of every pair cost and gradient this instance evaluates
        (:meth:`~allocopt.families.ExponentialFamily.pair_error_bound` of its family for its means); the
        certificate adds it to the optimality gap."""
        kind = self.check_kind(kind, "TopKProblem.evaluation_error")
        cached = self._evaluation_error.get(kind)
        if cached is None:
            cached = self._evaluation_error[kind] = float(self._family.pair_error_bound(kind, self._theta))
        return cached

    def effective_weights(self, psi: np.ndarray) -> np.ndarray:
        r"""Effective weights :math:`w_a = \psi_a / \phi_a`."""
        return psi / self._dispersion

    def pair_terms(self, psi: np.ndarray, rows: Any = None, cols: Any = None, kind: str = "confidence",
                   second_order: bool = False) -> PairTerms:
        r"""Costs and derivatives of selected pairs, with derivatives taken with respect to :math:`\psi`.

        Parameters
        ----------
        psi : ndarray, shape (K,)
            Allocation (unchecked: callers validate).
        rows, cols : array_like of int, optional
            Positions in :attr:`top` and :attr:`bottom` of the pairs to evaluate (broadcast together).
            By default the full ``(k, K-k)`` grid.
        kind : {"confidence", "budget"}
        second_order : bool
            Also return second derivatives.
        """
        if rows is None and cols is None:
            (theta_top, eta_top, inverse_top), (theta_bottom, eta_bottom, inverse_bottom) = self._full_grids()
            weights = psi / self._dispersion
            w_top, w_bottom = weights[self._top][:, None], weights[self._bottom][None, :]
        else:
            top, bottom = self._top[np.asarray(rows)], self._bottom[np.asarray(cols)]
            eta = self.unit_natural
            theta_top, eta_top, inverse_top = self._theta[top], eta[top], 1.0 / self._dispersion[top]
            theta_bottom, eta_bottom, inverse_bottom = (self._theta[bottom], eta[bottom],
                                                        1.0 / self._dispersion[bottom])
            w_top, w_bottom = psi[top] * inverse_top, psi[bottom] * inverse_bottom
        return allocation_pair_terms(self._family, kind, theta_top, theta_bottom, eta_top, eta_bottom, w_top, w_bottom,
                                     inverse_top, inverse_bottom, second_order)

    def costs(self, psi: ArrayLike, kind: str = "confidence") -> np.ndarray:
        r"""The matrix of pairwise costs at ``psi``.

        Parameters
        ----------
        psi : array_like, shape (K,)
            A nonnegative allocation (costs are 1-homogeneous, so it need not sum to one).
        kind : {"confidence", "budget"}
            :math:`C_{ij}` (fixed confidence, posterior rate) or :math:`B_{ij}` (fixed budget).

        Returns
        -------
        ndarray, shape (k, K-k)
            Entry ``[r, c]`` is the cost of the pair ``(top[r], bottom[c])``.
        """
        psi = self.check_allocation(psi, "TopKProblem.costs")
        kind = self.check_kind(kind, "TopKProblem.costs")
        return self.pair_terms(psi, kind=kind).cost

    def value(self, psi: ArrayLike, kind: str = "confidence") -> float:
        r""":math:`\Gamma(\psi) = \min_{i \in I, j \in J} C_{ij}(\psi)` (or the minimum of :math:`B_{ij}`).

        Evaluated without materialising the cost matrix (chunks, pruned by a closed-form lower bound), so it
        also works for :math:`k(K-k)` in the tens of millions.
        """
        psi = self.check_allocation(psi, "TopKProblem.value")
        kind = self.check_kind(kind, "TopKProblem.value")
        return self.minimum_cost(psi, kind)[0]

    def minimum_cost(self, psi: np.ndarray, kind: str = "confidence", threshold: float | None = None,
                     limit: int = 1_000_000):
        """``(minimum cost, scan)``: the minimum over all pairs and the :class:`~allocopt.topk._scan.PairScan`
        of the (at most ``limit``) pairs below ``threshold`` (unchecked arguments; see
        :func:`~allocopt.topk._scan.scan_pairs`)."""
        from ._scan import scan_pairs

        weights = psi / self._dispersion

        def evaluate(rows, cols):
            return self.pair_terms(psi, rows, cols, kind=kind).cost

        scan = scan_pairs(evaluate, self._family, self._theta[self._top], self._theta[self._bottom],
                          weights[self._top], weights[self._bottom], threshold, limit=limit)
        return float(scan.minimum), scan

    def gradients(self, psi: ArrayLike, kind: str = "confidence") -> tuple[np.ndarray, np.ndarray]:
        r"""Partial derivatives of every pair cost: :math:`(\partial C_{ij}/\partial\psi_i,
        \partial C_{ij}/\partial\psi_j)`, each of shape (k, K-k).

        By the envelope theorem :math:`\partial C_{ij}/\partial\psi_i = d(\theta_i, m_{ij})/\phi_i`.
        """
        psi = self.check_allocation(psi, "TopKProblem.gradients")
        kind = self.check_kind(kind, "TopKProblem.gradients")
        terms = self.pair_terms(psi, kind=kind)
        return terms.grad_top, terms.grad_bottom

    def sampling_functions(self, psi: ArrayLike, kind: str = "confidence") -> tuple[np.ndarray, np.ndarray]:
        r"""The sampling functions :math:`h_{i;j} = \psi_i \partial_i C_{ij} / C_{ij}` and
        :math:`h_{j;i} = 1 - h_{i;j}`, each of shape (k, K-k).

        For Gaussian arms with a common variance :math:`h_{i;j} = \psi_j/(\psi_i + \psi_j)`. Pairs with zero
        cost get :math:`h_{i;j} = 1/2`.
        """
        psi = self.check_allocation(psi, "TopKProblem.sampling_functions")
        kind = self.check_kind(kind, "TopKProblem.sampling_functions")
        terms = self.pair_terms(psi, kind=kind)
        h_top = sampling_function_top(terms.cost, terms.grad_top, psi[self._top][:, None], psi[self._bottom][None, :])
        return h_top, 1.0 - h_top


_TINY = float(np.finfo(float).tiny)
_SMALLEST_SUBNORMAL = 5e-324


def restored_cost(value: float, exponent: int, problem: TopKProblem, func: str) -> float:
    r""":math:`2^e` times ``value``, a value :math:`\Gamma` of the instance whose costs are those of ``problem``
    times :math:`2^{-e}` (:meth:`TopKProblem.cost_normalisation`; ``exponent`` 0 when ``problem`` was solved as
    given), refused when it leaves the normal floating-point range.

    A value that overflows, or that falls below the smallest normal number :math:`2^{-1022}` (where floating-point
    numbers lose relative precision: a subnormal or zero :math:`\Gamma` certifies nothing about
    :math:`\Gamma^*`), raises :class:`~allocopt.InvalidInstanceError` naming the scale of the instance.

    Examples
    --------
    >>> problem = TopKProblem([1e-200, 0.0, -1e-200], 1)  # Gamma* is about 1.17e-401
    >>> restored_cost(0.125, 3, problem, "solve_topk")
    1.0
    >>> try:
    ...     restored_cost(0.1367, -1329, problem, "solve_topk")
    ... except InvalidInstanceError as error:
    ...     print(str(error).split("instead: ")[1])
    its value is about 0.1367 * 2**-1329 (scale the means or variances).
    """
    with np.errstate(over="ignore", under="ignore"):
        restored = float(np.ldexp(value, exponent))
    if not _TINY <= restored <= float(np.finfo(float).max):
        about = f"{value!r} * 2**{exponent}" if exponent else f"{value!r}"
        raise InvalidInstanceError(
            f"The 'theta' parameter of {func} must give an optimal value within the normal floating-point range "
            f"[{_TINY!r}, {float(np.finfo(float).max)!r}]. Got {problem!r} instead: its value is about {about} "
            "(scale the means or variances).")
    return restored


def scaled_bound(bound: ArrayLike, exponent: int) -> np.ndarray:
    """:math:`2^e` times a nonnegative ``bound`` (a gap or an upper bound, scalar or array), rounded up: a result in
    the subnormal range, where the scaling is no longer exact, gets the smallest subnormal number added, so that
    it still bounds what it bounded before."""
    with np.errstate(over="ignore", under="ignore"):
        scaled = np.ldexp(np.asarray(bound, dtype=float), exponent)
        return np.where((scaled < _TINY) & (np.asarray(bound) > 0), scaled + _SMALLEST_SUBNORMAL, scaled)


def sampling_function_top(cost: np.ndarray, grad_top: np.ndarray, psi_top: np.ndarray,
                          psi_bottom: np.ndarray) -> np.ndarray:
    r""":math:`h_{i;j} = \psi_i \partial_i C_{ij} / C_{ij}` (broadcasting), clipped to [0, 1].

    At zero cost the limits are used: the arm without allocation gets everything (:math:`h_{i;j} = 1` if
    :math:`\psi_i = 0 < \psi_j`, 0 if :math:`\psi_j = 0 < \psi_i`) and 1/2 when both are zero.
    """
    positive = cost > 0
    safe_cost = np.where(positive, cost, 1.0)
    limit = np.where(psi_top > 0, np.where(psi_bottom > 0, 0.5, 0.0), np.where(psi_bottom > 0, 1.0, 0.5))
    return np.clip(np.where(positive, psi_top * grad_top / safe_cost, limit), 0.0, 1.0)


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.array(array, copy=True)
    array.setflags(write=False)
    return array
