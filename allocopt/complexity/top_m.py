r"""Gaps and gap-based complexities of best-arm and top-``m`` identification.

Sources: Shahrampour and Tarokh (2017), *Nonlinear Sequential Accepts and Rejects for Identification of Top Arms
in Stochastic Bandits*, eq. (2)-(4); Jiang, Li, Qiao (2017), *Practical Algorithms for Best-K Identification in
Multi-Armed Bandits*, Section 2 (the gap :math:`\Delta_i` and :math:`H = \sum_i \Delta_i^{-2}`); Chen, Chen,
Zhang, Zhou (2017), *Adaptive Multiple-Arm Identification*, eq. (2) (the same gap and :math:`\tilde H`).

Conventions shared by every function of this module
---------------------------------------------------
* ``means`` may be unsorted. It is one instance (a vector of length :math:`K`) or a batch of instances (an array of
  shape ``(..., K)``); a batch gives an array of results of shape ``(...)``.
* :math:`\mu_{[r]}` is the :math:`r`-th largest mean (1-based rank, ties in any order).
* Gaps are returned in the input order of the arms. :math:`\Delta_{(1)} \le \Delta_{(2)} \le \dots \le
  \Delta_{(K)}` are the same gaps sorted increasingly, as in Shahrampour and Tarokh (2017), eq. (4).
* Measures that divide by a gap need the top-``m`` set to be unique, :math:`\mu_{[m]} > \mu_{[m+1]}`; a tie at that
  boundary raises :class:`~allocopt.exceptions.InvalidInstanceError` naming the tied arms. Ties elsewhere are fine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import as_int, as_positive_float
from ._inputs import FloatOrArray, as_means, as_subset_size, ranked_descending, require_unique_top, top_m_gaps

__all__ = ["gaps", "h1", "h1_bai", "h2", "h_p", "c_p", "logbar", "sorted_gaps", "lil_sample_complexity"]

ArrayLike = Any


def gaps(means: ArrayLike, m: int) -> np.ndarray:
    r"""Top-``m`` gaps :math:`\Delta_i^{(m)}` of every arm, in the input order.

    .. math::

        \Delta_i^{(m)} = \begin{cases} \mu_i - \mu_{[m+1]} & \text{if arm } i \text{ is in the top } m,\\
        \mu_{[m]} - \mu_i & \text{otherwise,}\end{cases}

    so both boundary arms get :math:`\mu_{[m]} - \mu_{[m+1]}` (Shahrampour and Tarokh 2017, eq. (4); Jiang, Li, Qiao
    2017, Section 2; Chen, Chen, Zhang, Zhou 2017, eq. (2)). With ``m = 1`` these are the best-arm gaps
    :math:`\mu_{[1]} - \mu_i` of Shahrampour and Tarokh (2017), eq. (2), for every arm but the best one, which gets
    :math:`\mu_{[1]} - \mu_{[2]}` (Chen, Chen, Zhang, Zhou 2017, remark after eq. (2)).

    Arms tied at the top-``m`` boundary get a zero gap (the value does not depend on which tied arm is called
    "top"); functions that divide by gaps reject such instances.

    Parameters
    ----------
    means : array_like, shape (..., K)
        Means of the arms, in any order; leading axes index instances.
    m : int
        Size of the top set, in ``1..K-1``.

    Returns
    -------
    numpy.ndarray, shape (..., K)
        The gaps, arm by arm in the input order.

    Examples
    --------
    >>> gaps([0.5, 0.9, 0.7, 0.2], 2)
    array([0.2, 0.4, 0.2, 0.5])
    """
    array = as_means(means, "gaps")
    m = as_subset_size(m, array.shape[-1], "gaps", "m")
    return top_m_gaps(array, ranked_descending(array), m)


def sorted_gaps(means: ArrayLike, m: int, *, func: str = "sorted_gaps") -> np.ndarray:
    r"""The top-``m`` gaps sorted increasingly, :math:`\Delta_{(1)} \le \dots \le \Delta_{(K)}`.

    The top-``m`` set must be unique (:math:`\mu_{[m]} > \mu_{[m+1]}`), so every gap is positive.

    Examples
    --------
    >>> sorted_gaps([0.5, 0.9, 0.7, 0.2], 2)
    array([0.2, 0.2, 0.4, 0.5])
    """
    array = as_means(means, func)
    m = as_subset_size(m, array.shape[-1], func, "m")
    ranked = ranked_descending(array)
    require_unique_top(array, ranked, m, func)
    return np.sort(top_m_gaps(array, ranked, m), axis=-1)


def h1(means: ArrayLike, m: int) -> FloatOrArray:
    r"""Top-``m`` complexity :math:`H_1^{(m)} = \sum_{i=1}^K (\Delta_i^{(m)})^{-2}`, a sum over all :math:`K` arms.

    Shahrampour and Tarokh (2017), eq. (4). It is also the :math:`H = \sum_i \Delta_i^{-2}` of Jiang, Li, Qiao
    (2017) (Best-:math:`K`, fixed confidence: lil'RandLUCB and lil'CLUCB take :math:`O(\sum_i
    \Delta_i^{-2}(\log\delta^{-1} + \log N + \log\log \Delta_i^{-1}))` samples) and the :math:`\tilde H` of Chen,
    Chen, Zhang, Zhou (2017). With ``m = 1`` it includes the best arm's term
    :math:`(\mu_{[1]} - \mu_{[2]})^{-2}`, unlike :func:`h1_bai`.

    Parameters
    ----------
    means : array_like, shape (..., K)
        Means in any order; the top-``m`` set must be unique.
    m : int
        Size of the top set, in ``1..K-1``.

    Returns
    -------
    float or numpy.ndarray of shape (...)

    Examples
    --------
    >>> round(float(h1([0.7, 0.7, 0.5, 0.5], 2)), 9)  # four gaps of 0.2: 4 / 0.04
    100.0
    """
    return _sum_inverse_squares(sorted_gaps(means, m, func="h1"))


def h1_bai(means: ArrayLike) -> FloatOrArray:
    r"""Best-arm complexity :math:`H_1 = \sum_{i=2}^K \Delta_i^{-2}`, :math:`\Delta_i = \mu_{[1]} - \mu_{[i]}`.

    Shahrampour and Tarokh (2017), eq. (2): the sum runs over the :math:`K-1` suboptimal arms (ranks 2..K), so
    ``h1_bai(means) == h1(means, 1) - (mu_[1] - mu_[2])**-2``. The best arm must be unique.

    Examples
    --------
    >>> round(float(h1_bai([0.5, 0.9, 0.8])), 9)  # 0.1**-2 + 0.4**-2
    106.25
    """
    return _sum_inverse_squares(sorted_gaps(means, 1, func="h1_bai")[..., 1:])


def _sum_inverse_squares(gap_values: np.ndarray) -> np.ndarray:
    """``sum_i Delta_i**-2`` along the last axis (the gaps must be positive; gaps below 1e-154 give ``inf``)."""
    with np.errstate(over="ignore"):
        return np.sum(gap_values**-2.0, axis=-1)


def _max_rank_weighted(sorted_gap_values: np.ndarray, p: float) -> np.ndarray:
    """``max_{i=2..K} i**p / Delta_(i)**2`` for gaps sorted increasingly along the last axis (no validation)."""
    n_arms = sorted_gap_values.shape[-1]
    ranks = np.arange(2, n_arms + 1, dtype=float)
    with np.errstate(over="ignore"):
        return np.max(ranks**p * sorted_gap_values[..., 1:] ** -2.0, axis=-1)


def h2(means: ArrayLike, m: int) -> FloatOrArray:
    r"""Top-``m`` complexity :math:`H_2^{(m)} = \max_{i \in \{2..K\}} i\,(\Delta_{(i)}^{(m)})^{-2}`.

    Shahrampour and Tarokh (2017), eq. (4), with the gaps sorted increasingly. With ``m = 1`` this is the best-arm
    :math:`H_2 = \max_{i \ne 1} i \Delta_i^{-2}` of eq. (2) (there the arms are ranked by decreasing mean, so their gaps
    increase). Equal to :func:`h_p` at ``p = 1``.

    Examples
    --------
    >>> round(float(h2([0.5, 0.9, 0.8], 1)), 9)  # max(2 / 0.1**2, 3 / 0.4**2)
    200.0
    """
    return _max_rank_weighted(sorted_gaps(means, m, func="h2"), 1.0)


def h_p(means: ArrayLike, p: float, m: int) -> FloatOrArray:
    r"""Nonlinear complexity :math:`H^{(m)}(p) = \max_{i \in \{2..K\}} i^p\,(\Delta_{(i)}^{(m)})^{-2}`.

    Shahrampour and Tarokh (2017), eq. (3) (best arm, ``m = 1``) and eq. (4) (top ``m``). :math:`H^{(m)}(1) =
    H_2^{(m)}`; :math:`H^{(m)}(p) \le H_2^{(m)}` for :math:`p < 1` and :math:`\ge` for :math:`p > 1`.

    Parameters
    ----------
    means : array_like, shape (..., K)
        Means in any order; the top-``m`` set must be unique.
    p : float
        Exponent, ``p > 0`` (NSAR and Nonlinear Sequential Elimination take :math:`p \in (0, 2]`).
    m : int
        Size of the top set, in ``1..K-1``.

    Examples
    --------
    >>> round(float(h_p([0.5, 0.9, 0.8], 2.0, 1)), 9)  # max(2**2 / 0.1**2, 3**2 / 0.4**2)
    400.0
    """
    p = as_positive_float(p, "h_p", "p")
    return _max_rank_weighted(sorted_gaps(means, m, func="h_p"), p)


def c_p(n_arms: int, p: float) -> float:
    r"""NSAR's budget-division constant :math:`C_p = 2^{-p} + \sum_{r=2}^K r^{-p}`.

    Also Nonlinear Sequential Elimination's.

    Shahrampour and Tarokh (2017), eq. (3). :math:`C_1 = \overline{\log}(K)` (:func:`logbar`); :math:`C_p >
    \overline{\log}(K)` for :math:`p < 1` and :math:`C_p < \overline{\log}(K)` for :math:`p > 1`.

    Parameters
    ----------
    n_arms : int
        Number of arms :math:`K \ge 2`.
    p : float
        Exponent, ``p > 0``.

    Examples
    --------
    >>> c_p(3, 2.0)  # 1/4 + 1/4 + 1/9
    0.6111111111111112
    """
    n_arms = as_int(n_arms, "c_p", "n_arms", low=2)
    p = as_positive_float(p, "c_p", "p")
    return _c_p_value(n_arms, p)


def _c_p_value(n_arms: int, p: float) -> float:
    """:func:`c_p` without validation."""
    return float(2.0**-p + np.sum(np.arange(2, n_arms + 1, dtype=float) ** -p))


def logbar(n_arms: int) -> float:
    r""":math:`\overline{\log}(K) = 1/2 + \sum_{i=2}^K 1/i`, Successive Rejects' budget-division constant.

    Shahrampour and Tarokh (2017), caption of Table I (written :math:`\log K` there). Equal to :math:`C_1`
    (:func:`c_p`).

    Examples
    --------
    >>> logbar(3)  # 1/2 + 1/2 + 1/3
    1.3333333333333333
    """
    n_arms = as_int(n_arms, "logbar", "n_arms", low=2)
    return _c_p_value(n_arms, 1.0)


def lil_sample_complexity(means: ArrayLike, m: int, delta: float) -> FloatOrArray:
    r"""The sum in the sample complexity of lil'RandLUCB and lil'CLUCB (Jiang, Li, Qiao 2017, Theorems 3.1 and 4.1):

    .. math:: \sum_{i=1}^K \Delta_i^{-2}\left(\log\delta^{-1} + \log K + \log\log\max(\Delta_i^{-1}, e)\right),

    with the top-``m`` gaps :math:`\Delta_i` of :func:`gaps`. The theorems bound the expected number of samples by
    a constant times this sum; the constant is not given, so the sum is reported beside measured costs to show
    how they scale. The :math:`\max(\cdot, e)` keeps the iterated logarithm defined and non-negative for gaps
    above :math:`1/e` (the theorems are stated for small gaps, where it does not bind).

    Parameters
    ----------
    means : array_like, shape (..., K)
        Means in any order; the top-``m`` set must be unique.
    m : int
        Size of the top set, in ``1..K-1``.
    delta : float
        Confidence parameter, > 0.

    Examples
    --------
    >>> import math
    >>> value = lil_sample_complexity([0.5, 0.5, 0.0, 0.0], 2, 0.01)  # four gaps of 1/2
    >>> bool(abs(value - 4 * 4 * (math.log(100) + math.log(4) + math.log(math.log(math.e)))) < 1e-12)
    True
    """
    delta = as_positive_float(delta, "lil_sample_complexity", "delta")
    gap_values = sorted_gaps(means, m, func="lil_sample_complexity")
    iterated = np.log(np.log(np.maximum(1.0 / gap_values, np.e)))
    per_arm = (np.log(1.0 / delta) + np.log(gap_values.shape[-1]) + iterated) / gap_values**2
    return np.sum(per_arm, axis=-1)[()]
