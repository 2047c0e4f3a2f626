r"""The Chernoff (GLR) stopping rule and its thresholds, shared by every sampling rule.

With counts :math:`N_a`, empirical means :math:`\hat\theta_a`, the empirical top-k :math:`\hat I` and the
others :math:`\hat J` after :math:`t` pulls (Wang, Yang, You 2022, eq. (22)):

.. math::
    Z_t = \min_{i \in \hat I,\ j \in \hat J} \big[N_i\, d(\hat\theta_i, m_{ij}) + N_j\, d(\hat\theta_j, m_{ij})\big],
    \qquad m_{ij} = \frac{N_i \hat\theta_i + N_j \hat\theta_j}{N_i + N_j},

that is :math:`t\, C_{ij}(N/t)` at :math:`\theta = \hat\theta`. The run stops at the first :math:`t` with
:math:`Z_t > \beta(t, \delta)` and recommends :math:`\hat I`. The pair costs come from the top-k layer's
vectorised kernel (:func:`allocopt.topk.pairs.pair_terms`, with a closed form for Gaussian arms, see
:mod:`allocopt.algorithms.engine._pair_kernels`) evaluated at effective weights :math:`N_a/\phi_a`, for one run or
a batch of runs at once (:func:`glr_statistic_numpy`, the specification). A batch of Gaussian runs, or of a family
with a compiled pair kernel (Bernoulli, Poisson, exponential), goes through the compiled loop's statistic
(:func:`allocopt.algorithms.engine.loop.chernoff_statistic`), the one the compiled runs read.

Thresholds
    * ``"heuristic"``: :math:`\beta(t, \delta) = \log((\log t + 1)/\delta)`, used in the experiments of Wang,
      Yang, You (2022, Section 5) after Garivier and Kaufmann (2016);
    * ``"theoretical"``: :math:`\beta(t, \delta) = \log(C t^\alpha/\delta)` (Lemma 4.1 of Wang, Yang, You 2022;
      Proposition 12 of Garivier and Kaufmann 2016). The lemma proves that some :math:`C(\alpha, K)` makes
      the rule :math:`\delta`-correct without giving its value; :class:`TheoreticalThreshold` takes
      :math:`\alpha` and :math:`C` as parameters (defaults :math:`\alpha = 1.1`, :math:`C = k(K-k)`, a union
      bound over the pairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Protocol, runtime_checkable

import numpy as np

from ..._validation import as_float, fail
from ...families import ExponentialFamily
from ..._numba import compiled_enabled
from ._pair_kernels import pair_cost_grid, sort_arms

__all__ = ["GLRStatistic", "glr_statistic", "glr_statistic_numpy", "Threshold", "CheckedThreshold",
           "HeuristicThreshold", "TheoreticalThreshold", "THRESHOLDS", "get_threshold"]


class GLRStatistic(NamedTuple):
    """The Chernoff statistic and the empirical top-k of one run (shapes ``()``/``(k,)``) or a batch.

    Attributes
    ----------
    value : ndarray
        :math:`Z_t` (0 when means tie across the top-k boundary).
    top, bottom : ndarray of int
        Empirical top-k and the other arms, in increasing arm order.
    pair_top, pair_bottom : ndarray of int
        The arms of the pair attaining the minimum (the first one in row-major order among exact ties).
    """

    value: np.ndarray
    top: np.ndarray
    bottom: np.ndarray
    pair_top: np.ndarray
    pair_bottom: np.ndarray


def glr_statistic(family: ExponentialFamily, dispersion: np.ndarray, counts: np.ndarray, means: np.ndarray,
                  k: int) -> GLRStatistic:
    r""":math:`Z_t` for one run (``counts``, ``means`` of shape (K,)) or a batch (shape (R, K)).

    A batch (``counts`` and ``means`` of shape (R, K), ``dispersion`` of shape (K,)) of Gaussian arms, or of a
    family with a compiled pair kernel, goes through the compiled loop's statistic
    (:func:`allocopt.algorithms.engine.loop.chernoff_rows`); everything else through :func:`glr_statistic_numpy`, its
    specification. Both give the same numbers where only arithmetic enters (Gaussian arms: bit for bit); where
    ``log`` enters, the compiled kernel calls the C library and numpy its own loops, which differ in the last ulp on
    some CPUs (AVX-512), so the values agree to twice the family's
    :meth:`~allocopt.families.ExponentialFamily.pair_error_bound`.

    Examples
    --------
    Two Gaussian arms of variance 1 pulled 4 and 2 times with means 1 and 0:
    :math:`Z = (1 - 0)^2 / (2 (1/4 + 1/2)) = 2/3`.

    >>> from allocopt.families import Gaussian
    >>> round(float(glr_statistic(Gaussian(1.0), np.ones(2), np.array([4, 2]), np.array([1.0, 0.0]), 1).value), 12)
    0.666666666667
    """
    batch = (means.ndim == 2 and np.shape(counts) == means.shape and np.shape(dispersion) == means.shape[-1:]
             and 0 < k < means.shape[-1] and compiled_enabled())
    code = statistic_code(family) if batch else None
    if code is None:
        return glr_statistic_numpy(family, dispersion, counts, means, k)
    from .loop import chernoff_rows, prepare_kernels

    prepare_kernels()
    n_rows, n_arms = means.shape
    value, pair_top, pair_bottom = np.empty(n_rows), np.empty(n_rows, dtype=np.int64), np.empty(n_rows, dtype=np.int64)
    top, bottom = np.empty((n_rows, k), dtype=np.int64), np.empty((n_rows, n_arms - k), dtype=np.int64)
    chernoff_rows(code, np.ascontiguousarray(counts, dtype=np.int64), np.ascontiguousarray(means, dtype=float),
                  np.ascontiguousarray(dispersion, dtype=float), k, value, top, bottom, pair_top, pair_bottom)
    return GLRStatistic(value, top, bottom, pair_top, pair_bottom)


def statistic_code(family: ExponentialFamily) -> int | None:
    """The number under which the compiled statistic evaluates the family's confidence costs
    (:data:`allocopt.algorithms.engine.loop.GAUSSIAN_STATISTIC` for the Gaussian closed form), or None (no compiled
    kernel, or the compiled kernels are off)."""
    from ...families import kernels as _compiled_families
    from .loop import GAUSSIAN_STATISTIC

    if not compiled_enabled():
        return None
    if family.harmonic_costs("confidence"):
        return GAUSSIAN_STATISTIC
    return _compiled_families.kernel_code(family.compiled_pair("confidence"))


def glr_statistic_numpy(family: ExponentialFamily, dispersion: np.ndarray, counts: np.ndarray, means: np.ndarray,
                        k: int) -> GLRStatistic:
    """:func:`glr_statistic` in numpy for every family (the twin of the compiled Gaussian kernel
    :func:`allocopt.algorithms.engine.loop.chernoff_rows`)."""
    arms = sort_arms(means, counts / dispersion, k)
    cost, _ = pair_cost_grid(family, "confidence", arms)
    # a tie across the boundary, or a degenerate pair at the edge of the domain (e.g. two bernoulli means at 0),
    # has cost 0: nothing separates the two arms
    cost = np.where(arms.value_top > arms.value_bottom, cost, 0.0)
    if not family.harmonic_costs("confidence"):  # the closed form of harmonic costs is never nan
        cost = np.where(np.isnan(cost), 0.0, cost)
    n_bottom = means.shape[-1] - k
    flat = cost.reshape(cost.shape[:-2] + (k * n_bottom,))
    position = np.argmin(flat, axis=-1)
    value = np.take_along_axis(flat, position[..., None], axis=-1)[..., 0]
    top, bottom = arms.top, arms.bottom
    pair_top = np.take_along_axis(top, (position // n_bottom)[..., None], axis=-1)[..., 0]
    pair_bottom = np.take_along_axis(bottom, (position % n_bottom)[..., None], axis=-1)[..., 0]
    return GLRStatistic(value, top, bottom, pair_top, pair_bottom)


@runtime_checkable
class Threshold(Protocol):
    """A stopping threshold :math:`\\beta(t, \\delta)`, vectorised over ``t`` (and ``delta``)."""

    name: str

    def __call__(self, t: np.ndarray, delta: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class HeuristicThreshold:
    r""":math:`\beta(t, \delta) = \log((\log t + 1)/\delta)`.

    Examples
    --------
    >>> round(float(HeuristicThreshold()(np.e, 0.1)), 12) == round(math.log(20.0), 12)
    True
    """

    name: str = "heuristic"

    def __call__(self, t, delta):
        return np.log((np.log(t) + 1.0) / delta)


@dataclass(frozen=True)
class TheoreticalThreshold:
    r""":math:`\beta(t, \delta) = \log(C t^\alpha/\delta)`.

    Parameters
    ----------
    alpha : float, default 1.1
        :math:`\alpha > 1`.
    constant : float, optional
        :math:`C > 0`; None uses :math:`k(K-k)` (set by the runner from the problem).
    """

    alpha: float = 1.1
    constant: float | None = None
    name: str = "theoretical"

    def __post_init__(self):
        as_float(self.alpha, "TheoreticalThreshold", "alpha", low=1.0, low_open=True)
        if self.constant is not None:
            as_float(self.constant, "TheoreticalThreshold", "constant", low=0.0, low_open=True)

    def for_problem(self, k: int, n_arms: int) -> TheoreticalThreshold:
        """This threshold with the default constant :math:`k(K-k)` filled in."""
        if self.constant is not None:
            return self
        return TheoreticalThreshold(alpha=self.alpha, constant=float(k * (n_arms - k)))

    def __call__(self, t, delta):
        constant = 1.0 if self.constant is None else self.constant
        return math.log(constant) + self.alpha * np.log(t) - np.log(delta)


THRESHOLDS = {"heuristic": HeuristicThreshold, "theoretical": TheoreticalThreshold}


@dataclass(frozen=True)
class CheckedThreshold:
    r"""A caller's threshold :math:`\beta(t, \delta)` whose every value is checked: numbers of the shape of
    ``t`` and ``delta`` broadcast together, none of them NaN (``+inf``, never stopping, is allowed). A NaN would
    never be crossed and would run every replication to the sample cap in silence.

    Examples
    --------
    >>> beta = CheckedThreshold(lambda t, delta: np.log(1.0 / delta) + 0.0 * t)
    >>> beta(np.array([[10.0]]), np.array([[0.1]])).round(6).tolist()
    [[2.302585]]
    >>> CheckedThreshold(lambda t, delta: np.nan * t)(np.array([[10.0]]), np.array([[0.1]]))
    Traceback (most recent call last):
    ...
    allocopt.exceptions.InvalidArgumentError: The 'threshold' parameter of identify must be a callable beta(t, delta) returning numbers, none of them NaN, of the shape of t and delta broadcast together ((1, 1) at t = 10). Got array of shape (1, 1): [[nan]] instead.
    """

    function: Callable[[np.ndarray, np.ndarray], Any]
    func: str = "identify"

    @property
    def name(self) -> str:
        """The callable's ``name`` attribute, else ``"custom"``."""
        return str(getattr(self.function, "name", "custom"))

    def __call__(self, t, delta):
        shape = np.broadcast_shapes(np.shape(t), np.shape(delta))
        requirement = (f"a callable beta(t, delta) returning numbers, none of them NaN, of the shape of t and delta "
                       f"broadcast together ({shape} at t = {float(np.min(t)):g})")
        try:
            values = np.asarray(self.function(t, delta))
        except (TypeError, ValueError, ArithmeticError) as error:
            fail(self.func, "threshold", requirement, f"{type(error).__name__}: {error}")
        if values.dtype.kind not in "iuf":
            fail(self.func, "threshold", requirement, values)
        try:
            values = np.broadcast_to(values.astype(float), shape)
        except ValueError:
            fail(self.func, "threshold", requirement, values)
        if np.isnan(values).any():
            fail(self.func, "threshold", requirement, values)
        return values


def get_threshold(threshold, func: str, k: int, n_arms: int, deltas: np.ndarray | None = None):
    """A threshold object from a name (``"heuristic"``, ``"theoretical"``) or a callable ``beta(t, delta)``
    (wrapped in :class:`CheckedThreshold`, and tried once at ``t = K`` and ``deltas`` when they are given, so
    that a threshold that fails from the start is refused before any work)."""
    if isinstance(threshold, str):
        if threshold not in THRESHOLDS:
            fail(func, "threshold", "one of 'heuristic', 'theoretical' or a callable beta(t, delta)", threshold)
        threshold = THRESHOLDS[threshold]()
    elif not callable(threshold):
        fail(func, "threshold", "one of 'heuristic', 'theoretical' or a callable beta(t, delta)", threshold)
    if isinstance(threshold, TheoreticalThreshold):
        return threshold.for_problem(k, n_arms)
    if isinstance(threshold, (HeuristicThreshold, CheckedThreshold)):
        return threshold
    checked = CheckedThreshold(threshold, func)
    if deltas is not None:
        checked(np.array([[float(n_arms)]]), np.asarray(deltas, dtype=float)[None, :])
    return checked
