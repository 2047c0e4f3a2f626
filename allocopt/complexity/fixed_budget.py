r"""Fixed-budget error bounds (Table I, Proposition 2) and sample complexities (Table II) of Shahrampour and Tarokh.

Source: Shahrampour and Tarokh (2017), *Nonlinear Sequential Accepts and Rejects for Identification of Top Arms
in Stochastic Bandits*. Rewards are supported on [0, 1] there; the bounds come from Hoeffding's inequality.

Every error bound has the form :math:`P(\text{error}) \le \beta \exp(-T/\alpha)` for a budget of :math:`T` pulls
and is returned as an :class:`ErrorBound`, which also gives the smallest budget that brings the bound down to a
target :math:`\delta`. ``means`` follows the conventions of :mod:`allocopt.complexity.top_m` (unsorted, optionally
batched along leading axes; a tie at the top-``m`` boundary raises).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import as_float_array, as_positive_float, fail
from ._inputs import FloatOrArray, as_confidence
from .top_m import _c_p_value, _max_rank_weighted, _sum_inverse_squares, sorted_gaps

__all__ = [
    "ErrorBound",
    "successive_rejects_bound",
    "sequential_halving_bound",
    "nonlinear_sequential_elimination_bound",
    "nsar_error_bound",
    "sar_sample_complexity",
    "at_lucb_sample_complexity",
    "nsar_sample_complexity",
]

ArrayLike = Any


@dataclass(frozen=True, eq=False)
class ErrorBound:
    r"""A fixed-budget bound :math:`P(\text{error}) \le \beta\,\exp(-T/\alpha)`.

    Attributes
    ----------
    algorithm : str
        The algorithm the bound is about.
    alpha, beta : float or numpy.ndarray
        The constants (arrays of shape ``(...)`` when computed for a batch of instances).
    source : str
        Where the bound is stated.
    """

    algorithm: str
    alpha: FloatOrArray
    beta: FloatOrArray
    source: str

    def error_probability(self, budget: ArrayLike) -> FloatOrArray:
        r""":math:`\beta \exp(-T/\alpha)` at budget ``T`` (array_like, broadcast against a batch; may exceed 1)."""
        budget_array = as_float_array(budget, f"{type(self).__name__}.error_probability", "budget",
                                       "a number >= 0 or an array of numbers >= 0")
        if not np.all(np.isfinite(budget_array)) or np.any(budget_array < 0):
            fail(f"{type(self).__name__}.error_probability", "budget", "a number >= 0 or an array of numbers >= 0",
                 budget)
        return self.beta * np.exp(-budget_array / self.alpha)

    def required_budget(self, delta: float) -> FloatOrArray:
        r"""Smallest budget with :math:`\beta e^{-T/\alpha} \le \delta`, :math:`T = \max(0, \alpha\log(\beta/\delta))`.
        """
        delta = as_confidence(delta, f"{type(self).__name__}.required_budget")
        return np.maximum(0.0, self.alpha * np.log(self.beta / delta))


def _top_m_ingredients(means: ArrayLike, m: int, p: float, func: str) -> tuple[np.ndarray, int, np.ndarray, float]:
    r"""Sorted top-``m`` gaps, ``K``, :math:`H^{(m)}(p)` and :math:`C_p`, validated in the name of ``func``."""
    ordered = sorted_gaps(means, m, func=func)
    p = as_positive_float(p, func, "p")
    n_arms = ordered.shape[-1]
    return ordered, n_arms, _max_rank_weighted(ordered, p), _c_p_value(n_arms, p)


def successive_rejects_bound(means: ArrayLike) -> ErrorBound:
    r"""Successive Rejects (Audibert and Bubeck 2010), best arm: Shahrampour and Tarokh (2017), Table I.

    :math:`\alpha = H_2\,\overline{\log}(K)` and :math:`\beta = \tfrac12 K(K-1)\exp(K/(H_2\overline{\log}(K)))`, with
    :math:`H_2` = :func:`~allocopt.complexity.h2` at ``m = 1`` and :math:`\overline{\log}` =
    :func:`~allocopt.complexity.logbar`.
    The best arm must be unique.

    Examples
    --------
    >>> bound = successive_rejects_bound([0.5, 0.9, 0.8])
    >>> round(float(bound.alpha), 6)  # H2 = 200, logbar(3) = 4/3
    266.666667
    """
    _, n_arms, h_2, logbar_k = _top_m_ingredients(means, 1, 1.0, "successive_rejects_bound")
    alpha = h_2 * logbar_k
    beta = 0.5 * n_arms * (n_arms - 1) * np.exp(n_arms / alpha)
    return ErrorBound("Successive Rejects", alpha, beta,
                      "Shahrampour & Tarokh 2017, Table I (Audibert & Bubeck 2010)")


def sequential_halving_bound(means: ArrayLike) -> ErrorBound:
    r"""Sequential Halving (Karnin, Koren, Somekh 2013), best arm: Shahrampour and Tarokh (2017), Table I.

    :math:`\alpha = 8 H_2 \log_2 K` and :math:`\beta = 3\log_2 K`. The best arm must be unique.

    Examples
    --------
    >>> round(float(sequential_halving_bound([0.5, 0.9, 0.8, 0.1]).beta), 6)  # 3 log2(4)
    6.0
    """
    _, n_arms, h_2, _ = _top_m_ingredients(means, 1, 1.0, "sequential_halving_bound")
    log2_arms = np.log2(n_arms)
    alpha = 8.0 * h_2 * log2_arms
    beta = np.broadcast_to(3.0 * log2_arms, np.shape(alpha))[()]
    return ErrorBound("Sequential Halving", alpha, beta,
                      "Shahrampour & Tarokh 2017, Table I (Karnin, Koren, Somekh 2013)")


def nonlinear_sequential_elimination_bound(means: ArrayLike, p: float) -> ErrorBound:
    r"""Nonlinear Sequential Elimination (Shahrampour, Noshad, Tarokh 2017): Shahrampour and Tarokh (2017), Table I.

    :math:`\alpha = H(p)\,C_p` and :math:`\beta = (K-1)\exp(K/(H(p) C_p))` with :math:`H(p)` =
    :func:`~allocopt.complexity.h_p` at ``m = 1`` and :math:`C_p` = :func:`~allocopt.complexity.c_p`. At ``p = 1``
    the exponent :math:`\alpha` equals Successive Rejects'.

    Examples
    --------
    >>> round(float(nonlinear_sequential_elimination_bound([0.5, 0.9, 0.8], 2.0).alpha), 6)  # 400 * 11/18
    244.444444
    """
    _, n_arms, h_of_p, c_of_p = _top_m_ingredients(means, 1, p, "nonlinear_sequential_elimination_bound")
    alpha = h_of_p * c_of_p
    beta = (n_arms - 1) * np.exp(n_arms / alpha)
    return ErrorBound("Nonlinear Sequential Elimination", alpha, beta,
                      "Shahrampour & Tarokh 2017, Table I (Shahrampour, Noshad, Tarokh 2017)")


def nsar_error_bound(means: ArrayLike, m: int, p: float) -> ErrorBound:
    r"""NSAR's Proposition 2: :math:`P(\text{error}) \le 2K^2\exp(-(T-K)/(8\,C_p H^{(m)}(p)))`.

    Written in the common form with :math:`\alpha = 8\,C_p H^{(m)}(p)` and :math:`\beta = 2K^2\exp(K/\alpha)`.
    At ``p = 1`` NSAR is SAR (Bubeck, Wang, Viswanathan 2013) and :math:`C_1 = \overline{\log}(K)`, so the bound
    is SAR's :math:`2K^2\exp(-(T-K)/(8\overline{\log}(K) H_2^{(m)}))`. The paper states it for
    :math:`p \in (0, 2]`; any ``p > 0`` is accepted.

    Examples
    --------
    >>> bound = nsar_error_bound([0.7, 0.7, 0.5, 0.5], 2, 1.0)
    >>> round(float(bound.alpha), 6)  # 8 * logbar(4) * H2 = 8 * (1/2 + 1/2 + 1/3 + 1/4) * 4 / 0.04
    1266.666667
    """
    _, n_arms, h_of_p, c_of_p = _top_m_ingredients(means, m, p, "nsar_error_bound")
    alpha = 8.0 * c_of_p * h_of_p
    beta = 2.0 * n_arms**2 * np.exp(n_arms / alpha)
    return ErrorBound("NSAR", alpha, beta, "Shahrampour & Tarokh 2017, Proposition 2")


def sar_sample_complexity(means: ArrayLike, m: int, delta: float) -> FloatOrArray:
    r"""SAR's sample complexity order :math:`H_2^{(m)}\,\overline{\log}(K)\,\log(K/\delta)` (Table II).

    The expression inside the :math:`O(\cdot)` of Table II (constants dropped): the budget at which SAR finds the
    top ``m`` arms with probability at least :math:`1-\delta`.

    Examples
    --------
    >>> round(float(sar_sample_complexity([0.7, 0.7, 0.5, 0.5], 2, 0.1)), 4)  # 100 * 19/12 * log(40)
    584.0726
    """
    _, n_arms, h_2, logbar_k = _top_m_ingredients(means, m, 1.0, "sar_sample_complexity")
    delta = as_confidence(delta, "sar_sample_complexity")
    return h_2 * logbar_k * np.log(n_arms / delta)


def at_lucb_sample_complexity(means: ArrayLike, m: int, delta: float) -> FloatOrArray:
    r"""AT-LUCB's sample complexity order :math:`H_1^{(m)}\log(H_1^{(m)}/\delta)` (Table II).

    Examples
    --------
    >>> round(float(at_lucb_sample_complexity([0.7, 0.7, 0.5, 0.5], 2, 0.1)), 4)  # 100 log(1000)
    690.7755
    """
    ordered = sorted_gaps(means, m, func="at_lucb_sample_complexity")
    delta = as_confidence(delta, "at_lucb_sample_complexity")
    hardness = _sum_inverse_squares(ordered)
    return hardness * np.log(hardness / delta)


def nsar_sample_complexity(means: ArrayLike, m: int, delta: float, p: float) -> FloatOrArray:
    r"""NSAR's sample complexity order :math:`H^{(m)}(p)\,C_p\log(K/\delta)` (Table II).

    At ``p = 1`` it equals :func:`sar_sample_complexity`.

    Examples
    --------
    >>> round(float(nsar_sample_complexity([0.7, 0.7, 0.5, 0.5], 2, 0.1, 1.0)), 4)
    584.0726
    """
    _, n_arms, h_of_p, c_of_p = _top_m_ingredients(means, m, p, "nsar_sample_complexity")
    delta = as_confidence(delta, "nsar_sample_complexity")
    return h_of_p * c_of_p * np.log(n_arms / delta)
