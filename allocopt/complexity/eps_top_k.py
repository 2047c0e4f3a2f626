r"""Aggregate regret and the hardness of finding :math:`\epsilon`-top-:math:`K` arms.

Source: Chen, Chen, Zhang, Zhou (2017), *Adaptive Multiple-Arm Identification*, ICML 2017: eq. (1)-(6),
Definition 1, Lemma 1, Theorems 1-2, and the bounds of Chen et al. (2014, CLUCB-PAC) and Zhou et al. (2014,
OptMAI) quoted in its introduction.

Conventions
-----------
* ``means`` may be unsorted; one instance (length ``n``) or a batch of shape ``(..., n)``.
* :math:`\theta_{[r]}` is the :math:`r`-th largest mean and :math:`\Delta_{[r]}` the top-``k`` gap of the arm of
  rank :math:`r` (1-based): :math:`\Delta_{[r]} = \theta_{[r]} - \theta_{[k+1]}` for :math:`r \le k` and
  :math:`\theta_{[k]} - \theta_{[r]}` otherwise (Chen, Chen, Zhang, Zhou 2017, eq. (2), the gap of
  :func:`allocopt.complexity.gaps`).
* No strict order is needed: a tie at the top-``k`` boundary gives a zero gap, and every measure here caps
  :math:`\Delta_i^{-2}` by :math:`\epsilon^{-2}` or :math:`(\Psi_t^\epsilon)^{-2}`, so it stays finite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import as_float_array, as_float, as_int, as_positive_float, fail
from ._inputs import FloatOrArray, as_confidence, as_means, as_subset_size, ranked_descending, top_m_gaps

__all__ = [
    "EpsTopKHardness",
    "aggregate_regret",
    "h_0_eps",
    "h_t_eps",
    "spread_constant",
    "adaptive_topk_sample_complexity",
    "improved_topk_sample_complexity",
    "clucb_pac_sample_complexity",
    "zhou_sample_complexity",
]

ArrayLike = Any


def _as_selection(selected: Any, n_arms: int, func: str) -> np.ndarray:
    """Integer arm indices of shape (..., K), 1 <= K <= n_arms, distinct within each selection."""
    requirement = (f"a set of distinct arm indices in 0..{n_arms - 1} (an integer array of shape (K,), or (..., K) "
                   f"for several sets of the same size K, 1 <= K <= {n_arms})")
    array = np.asarray(selected)
    if array.dtype == bool:  # a mask would be read as indices 0 and 1
        fail(func, "selected", requirement + ", not a boolean mask", selected)
    if not np.issubdtype(array.dtype, np.integer):
        float_array = as_float_array(selected, func, "selected", requirement)
        integral = np.all(np.isfinite(float_array)) and np.all(float_array == np.round(float_array))
        if float_array.size == 0 or not integral:
            fail(func, "selected", requirement, selected)
        array = float_array.astype(np.int64)
    if array.ndim == 0 or array.shape[-1] < 1 or array.shape[-1] > n_arms:
        fail(func, "selected", requirement, selected)
    if np.any(array < 0) or np.any(array >= n_arms):
        fail(func, "selected", requirement + "; some indices are out of range", selected)
    ordered = np.sort(array, axis=-1)
    if np.any(ordered[..., 1:] == ordered[..., :-1]):
        fail(func, "selected", requirement + "; some selection repeats an arm", selected)
    return array.astype(np.int64)


def aggregate_regret(means: ArrayLike, selected: ArrayLike) -> FloatOrArray:
    r"""Aggregate regret of a chosen set ``T`` of arms (Chen, Chen, Zhang, Zhou 2017, eq. (1)).

    .. math:: R_T = \frac1K\Big(\sum_{i=1}^K \theta_{[i]} - \sum_{i \in T}\theta_i\Big)

    (after Zhou et al. 2014): the average shortfall of the chosen :math:`K` arms against the best
    :math:`K`. ``T`` is an :math:`\epsilon`-top-:math:`K` set when :math:`R_T \le \epsilon`. No strict order of the
    means is needed.

    Parameters
    ----------
    means : array_like, shape (n,)
        Means of the ``n`` arms, in any order.
    selected : array_like of int, shape (K,) or (..., K)
        0-based indices of the chosen arms (distinct); a batch of selections of the same size, for example the
        recommendations of many simulated runs, gives one regret per selection.

    Returns
    -------
    float or numpy.ndarray of shape (...)

    Examples
    --------
    >>> round(float(aggregate_regret([0.9, 0.1, 0.5, 0.7], [0, 2])), 9)  # ((0.9 + 0.7) - (0.9 + 0.5)) / 2
    0.1
    """
    array = as_means(means, "aggregate_regret", min_arms=1)
    if array.ndim != 1:
        fail("aggregate_regret", "means", "a one-dimensional array of finite numbers (one instance)", means)
    chosen = _as_selection(selected, array.shape[0], "aggregate_regret")
    size = chosen.shape[-1]
    best_total = np.sum(ranked_descending(array)[:size])
    return (best_total - np.sum(array[chosen], axis=-1)) / size


def _rank_gaps(means: ArrayLike, k: int, func: str) -> tuple[np.ndarray, int]:
    """Top-k gaps in rank order, ``[..., r - 1] = Delta_[r]``, after validating ``means`` and ``k``."""
    array = as_means(means, func)
    k = as_subset_size(k, array.shape[-1], func, "k")
    ranked = ranked_descending(array)
    return top_m_gaps(ranked, ranked, k), k


def _capped_hardness(gap_values: np.ndarray, cap: Any) -> Any:
    r""":math:`\sum_i \min(\Delta_i^{-2}, c^{-2}) = \sum_i \max(\Delta_i, c)^{-2}` for a cap :math:`c > 0`."""
    with np.errstate(over="ignore"):
        return np.sum(np.maximum(gap_values, np.expand_dims(cap, -1)) ** -2.0, axis=-1)


def h_0_eps(means: ArrayLike, k: int, eps: float) -> FloatOrArray:
    r"""CLUCB-PAC's hardness :math:`H(0, \epsilon) = \sum_{i=1}^n \min(\Delta_i^{-2}, \epsilon^{-2})`.

    Chen, Chen, Zhang, Zhou (2017), Section 1 (Chen et al. 2014's bound for :math:`\epsilon`-top-:math:`K` arms is
    :math:`O((\log H(0,\epsilon) + \log\delta^{-1}) H(0,\epsilon))`). It is :func:`h_t_eps` evaluated at
    :math:`t = 0`, and :math:`H(t,\epsilon) \le H(0,\epsilon) \le n\epsilon^{-2}`. For O(1)-spread instances
    :math:`H(0,\epsilon) = \Omega(n/\epsilon)` (Lemma 1).

    Parameters
    ----------
    means : array_like, shape (..., n)
        Means in any order (ties allowed).
    k : int
        Number of arms to select, in ``1..n-1``.
    eps : float
        Tolerance on the aggregate regret, ``eps > 0``.

    Examples
    --------
    >>> round(float(h_0_eps([0.7, 0.7, 0.3, 0.3], 2, 0.5)), 9)  # gaps 0.4 < eps: 4 / 0.5**2
    16.0
    """
    return _h_0_eps(means, k, eps, "h_0_eps")


def _h_0_eps(means: ArrayLike, k: int, eps: float, func: str) -> Any:
    gap_values, _ = _rank_gaps(means, k, func)
    eps = as_positive_float(eps, func, "eps")
    return _capped_hardness(gap_values, eps)


@dataclass(frozen=True, eq=False)
class EpsTopKHardness:
    r"""The hardness :math:`H(t, \epsilon)` of Chen, Chen, Zhang, Zhou (2017), eq. (6), and its ingredients.

    Attributes
    ----------
    value : float or numpy.ndarray
        :math:`H(t,\epsilon) = \sum_i \min(\Delta_i^{-2}, (\Psi_t^\epsilon)^{-2})`.
    t : int or numpy.ndarray of int
        :math:`t(\epsilon, K)` of eq. (3): how many of the worst top-:math:`K` arms may be exchanged with the best
        other arms within the regret budget.
    psi_t : float or numpy.ndarray
        :math:`\Psi_t = \min(\Delta_{[K-t]}, \Delta_{[K+t+1]})`, eq. (4).
    psi_t_eps : float or numpy.ndarray
        :math:`\Psi_t^\epsilon = \max(\epsilon, \Psi_t)`, eq. (5).
    k : int
        Number of arms to select.
    eps : float
        Tolerance on the aggregate regret.
    """

    value: FloatOrArray
    t: int | np.ndarray
    psi_t: FloatOrArray
    psi_t_eps: FloatOrArray
    k: int
    eps: float


def h_t_eps(means: ArrayLike, k: int, eps: float) -> EpsTopKHardness:
    r"""Hardness :math:`H(t,\epsilon)` of :math:`\epsilon`-top-:math:`K` arms (Chen, Chen, Zhang, Zhou 2017, eq. (6)).

    Chen, Chen, Zhang, Zhou (2017), eq. (3)-(6):

    * :math:`t = t(\epsilon, K)` is the largest :math:`t \in \{0, \dots, K-1\}` with
      :math:`\Delta_{[K-t]}\,t \le K\epsilon` and :math:`\Delta_{[K+t+1]}\,t \le K\epsilon`;
    * :math:`\Psi_t = \min(\Delta_{[K-t]}, \Delta_{[K+t+1]})` and :math:`\Psi_t^\epsilon = \max(\epsilon, \Psi_t)`;
    * :math:`H(t,\epsilon) = \sum_{i=1}^n \min(\Delta_i^{-2}, (\Psi_t^\epsilon)^{-2})`.

    Since :math:`\Psi_t^\epsilon \ge \epsilon`, :math:`H(t,\epsilon) \le H(0,\epsilon) \le n\epsilon^{-2}`
    (:func:`h_0_eps`). For O(1)-spread instances with :math:`K = \gamma n` (:func:`spread_constant`),
    :math:`H(t,\epsilon) = O(n/\sqrt\epsilon)` (Lemma 1). AdaptiveTopK needs
    :math:`O((\log\log\epsilon^{-1} + \log n + \log\delta^{-1}) H(t,\epsilon))` pulls (Theorem 1).

    The arm of rank :math:`K+t+1` must exist, so when :math:`K > n/2` the search stops at
    :math:`t = n-K-1` (the paper's range :math:`t \le K-1` assumes :math:`K \le n/2`; its experiments use
    :math:`K \le n/2`). The inequalities are evaluated as written, without a tolerance.

    Parameters
    ----------
    means : array_like, shape (..., n)
        Means in any order (ties allowed).
    k : int
        Number of arms to select, ``K`` in ``1..n-1``.
    eps : float
        Tolerance on the aggregate regret, ``eps > 0``.

    Returns
    -------
    EpsTopKHardness
        ``value``, ``t``, ``psi_t`` and ``psi_t_eps`` (arrays of shape ``(...)`` for a batch).

    Examples
    --------
    >>> result = h_t_eps([0.7] * 4 + [0.3] * 6, 4, 0.1)  # all gaps 0.4; 0.4 t <= 0.4 allows t = 1
    >>> int(result.t), round(float(result.psi_t_eps), 9), round(float(result.value), 6)
    (1, 0.4, 62.5)
    """
    return _h_t_eps(means, k, eps, "h_t_eps")


def _h_t_eps(means: ArrayLike, k: int, eps: float, func: str) -> EpsTopKHardness:
    gap_values, k = _rank_gaps(means, k, func)
    eps = as_positive_float(eps, func, "eps")
    n_arms = gap_values.shape[-1]
    candidates = np.arange(0, min(k - 1, n_arms - k - 1) + 1)
    upper = gap_values[..., k - 1 - candidates]  # Delta_[K - t]
    lower = gap_values[..., k + candidates]  # Delta_[K + t + 1]
    budget = k * eps
    feasible = (upper * candidates <= budget) & (lower * candidates <= budget)
    t = np.max(np.where(feasible, candidates, 0), axis=-1)
    t_index = np.expand_dims(t, -1)
    psi_t = np.minimum(np.take_along_axis(upper, t_index, -1), np.take_along_axis(lower, t_index, -1))[..., 0]
    psi_t_eps = np.maximum(eps, psi_t)
    value = _capped_hardness(gap_values, psi_t_eps)
    return EpsTopKHardness(value=value, t=t[()], psi_t=psi_t[()], psi_t_eps=psi_t_eps[()], k=k, eps=eps)


def spread_constant(means: ArrayLike) -> FloatOrArray:
    r"""Smallest :math:`c \ge 1` making the instance :math:`c`-spread (Chen, Chen, Zhang, Zhou 2017, Definition 1).

    :math:`n` arms ranked :math:`\theta_{[1]} \ge \dots \ge \theta_{[n]}` are :math:`c`-spread when
    :math:`\frac{|i-j|}{cn} \le |\theta_{[i]} - \theta_{[j]}| \le \frac{c|i-j|}{n}` for all :math:`i, j`. The
    ratio :math:`|\theta_{[i]} - \theta_{[j]}|/|i-j|` is an average of consecutive differences, so its extremes
    over all pairs are attained by neighbours and

    .. math:: c = \max\Big(1,\; n \max_r (\theta_{[r]} - \theta_{[r+1]}),\;
              \frac{1}{n \min_r (\theta_{[r]} - \theta_{[r+1]})}\Big),

    which is infinite when two means are equal. Lemma 1 (O(1)-spread arms): :math:`H(t,\epsilon) =
    O(n/\sqrt\epsilon)` for :math:`K = \gamma n`, while :math:`H(0,\epsilon) = \Omega(n/\epsilon)`.

    Examples
    --------
    >>> float(spread_constant([0.0, 0.75, 0.25, 0.5]))  # UNIFORM-like: consecutive differences 1/n
    1.0
    """
    array = as_means(means, "spread_constant")
    ranked = ranked_descending(array)
    n_arms = array.shape[-1]
    steps = ranked[..., :-1] - ranked[..., 1:]
    largest = n_arms * np.max(steps, axis=-1)
    smallest = n_arms * np.min(steps, axis=-1)
    with np.errstate(over="ignore"):  # a subnormal step overflows to inf, as the definition wants
        inverse = np.divide(1.0, smallest, out=np.full_like(smallest, np.inf), where=smallest > 0)
    return np.maximum(1.0, np.maximum(largest, inverse))[()]


def _as_tolerance_below_one(eps: Any, func: str) -> float:
    return as_float(eps, func, "eps", low=0.0, high=1.0, low_open=True, high_open=True,
                    requirement="a tolerance in the open interval (0, 1) (log log(1/eps) must be defined)")


def adaptive_topk_sample_complexity(means: ArrayLike, k: int, eps: float, delta: float) -> FloatOrArray:
    r"""AdaptiveTopK's sample complexity (Chen, Chen, Zhang, Zhou 2017, Theorem 1), constants dropped.

    :math:`(\log\log\epsilon^{-1} + \log n + \log\delta^{-1})\,H(t,\epsilon)` with natural logarithms; the
    expression inside the :math:`O(\cdot)`. Needs :math:`0 < \epsilon < 1`; the :math:`\log\log` term is negative
    for :math:`\epsilon > 1/e`, as printed.

    Examples
    --------
    >>> value = adaptive_topk_sample_complexity([0.7] * 4 + [0.3] * 6, 4, 0.1, 0.05)
    >>> round(float(value), 4)  # (log log 10 + log 10 + log 20) * 62.5
    383.2719
    """
    func = "adaptive_topk_sample_complexity"
    eps = _as_tolerance_below_one(eps, func)
    delta = as_confidence(delta, func)
    hardness = _h_t_eps(means, k, eps, func).value
    n_arms = np.shape(means)[-1]
    return (np.log(np.log(1.0 / eps)) + np.log(n_arms) + np.log(1.0 / delta)) * hardness


def improved_topk_sample_complexity(means: ArrayLike, k: int, eps: float, delta: float) -> FloatOrArray:
    r"""The improved algorithm's sample complexity (Chen, Chen, Zhang, Zhou 2017, Theorem 2), constants dropped.

    :math:`(\log\epsilon^{-1} + \log\delta^{-1})\,H(t,\epsilon)`; removes Theorem 1's :math:`\log n`. Needs
    :math:`0 < \epsilon < 1`.

    Examples
    --------
    >>> round(float(improved_topk_sample_complexity([0.7] * 4 + [0.3] * 6, 4, 0.1, 0.05)), 4)  # log(200) * 62.5
    331.1448
    """
    func = "improved_topk_sample_complexity"
    eps = _as_tolerance_below_one(eps, func)
    delta = as_confidence(delta, func)
    return (np.log(1.0 / eps) + np.log(1.0 / delta)) * _h_t_eps(means, k, eps, func).value


def clucb_pac_sample_complexity(means: ArrayLike, k: int, eps: float, delta: float) -> FloatOrArray:
    r"""CLUCB-PAC's sample complexity for :math:`\epsilon`-top-:math:`K` arms, constants dropped.

    :math:`(\log H(0,\epsilon) + \log\delta^{-1})\,H(0,\epsilon)` (Chen et al. 2014, as quoted in Chen, Chen,
    Zhang, Zhou 2017, Sections 1 and 1.2).

    Examples
    --------
    >>> round(float(clucb_pac_sample_complexity([0.7, 0.7, 0.3, 0.3], 2, 0.5, 0.05)), 4)  # (log 16 + log 20) * 16
    92.2931
    """
    delta = as_confidence(delta, "clucb_pac_sample_complexity")
    hardness = _h_0_eps(means, k, eps, "clucb_pac_sample_complexity")
    return (np.log(hardness) + np.log(1.0 / delta)) * hardness


def zhou_sample_complexity(n_arms: int, k: int, eps: float, delta: float) -> float:
    r"""OptMAI's instance-independent sample complexity, :math:`\frac{n}{\epsilon^2}(1 + \frac{\ln\delta^{-1}}{K})`.

    Zhou, Chen, Li (2014), as quoted in Chen, Chen, Zhang, Zhou (2017), Section 1: :math:`\Theta(\cdot)` of this
    expression pulls find :math:`\epsilon`-top-:math:`K` arms with probability :math:`1-\delta`, which is asymptotically
    optimal over all instances. Constants dropped.

    Examples
    --------
    >>> round(zhou_sample_complexity(1000, 100, 0.01, 0.01), 3)  # 1e7 * (1 + log(100) / 100)
    10460517.019
    """
    n_arms = as_int(n_arms, "zhou_sample_complexity", "n_arms", low=2)
    k = as_subset_size(k, n_arms, "zhou_sample_complexity", "k")
    eps = as_positive_float(eps, "zhou_sample_complexity", "eps")
    delta = as_confidence(delta, "zhou_sample_complexity")
    return float(n_arms / eps**2 * (1.0 + np.log(1.0 / delta) / k))
