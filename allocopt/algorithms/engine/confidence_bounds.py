r"""Confidence bounds of the LUCB family: exploration rates, KL bounds, sub-Gaussian radii and LIL radii.

Every function is elementwise over arms and runs (any array shape; a single run has shape (K,), a batch
(R, K)), uses a fixed amount of arithmetic per element and no randomness, so one run and a batch of runs
get bit-identical bounds.

Exploration rates :math:`\beta(t, \delta)` (``t`` is the number of pulls so far)
    * ``"heuristic"`` (default): :math:`\log((\log t + 1)/\delta)`, the rate Wang, Yang, You (2022, Section 5)
      give UGapE, KL-LUCB and KL-Elimination "to make fair comparisons" with the Chernoff rule;
    * ``"kalyanakrishnan"``: :math:`\log(5 K t^4 / (4\delta))`, LUCB1 of Kalyanakrishnan, Tewari, Auer,
      Stone (2012, Section 3), :math:`k_1 = 5/4` (the paper's :math:`t` counts rounds of two pulls; counting
      pulls gives a larger, still valid rate);
    * ``"kaufmann"``: :math:`\log(k_1 K t^\alpha/\delta) + \log\log(k_1 K t^\alpha/\delta)` with
      :math:`k_1 = 405.5`, :math:`\alpha = 1.1`, the KL-LUCB rate of Kaufmann and Kalyanakrishnan (2013,
      Theorem 2 and Section 5);
    * ``"gabillon"``: :math:`\log(4 K (t-1)^3/\delta)`, UGapEc of Gabillon, Ghavamzadeh, Lazaric (2012)
      (their radius :math:`b\sqrt{c\,\beta/T_k}` with :math:`c = 1/2` is the sub-Gaussian radius below with
      :math:`\sigma = b/2`);
    * a callable ``rate(t, delta, n_arms)`` returning positive numbers.

KL bounds (Kaufmann and Kalyanakrishnan 2013, Section 3; one-parameter exponential families)
    .. math::
        U_a = \max\{q \ge \hat\mu_a : d(\hat\mu_a, q) \le \beta/N_a\}, \qquad
        L_a = \min\{q \le \hat\mu_a : d(\hat\mu_a, q) \le \beta/N_a\},

    clipped to the closure of the family's mean domain, with the family's divergence
    :math:`d = d_1/\phi` and its dispersion :math:`\phi` (the gamma shape :math:`\alpha` gives
    :math:`\phi = 1/\alpha`: intervals :math:`\sqrt{1/\alpha}` times as wide, roughly, as the exponential
    family's). Gaussian arms of variance :math:`\sigma^2` have the closed form
    :math:`\hat\mu_a \pm \sqrt{2\sigma^2\beta/N_a}`; the other families are solved by
    :data:`BISECTION_STEPS` bisection steps on a bracket known to contain the bound (on the log scale for the
    exponential divergence, whose upper bound can be :math:`e^{\beta/N}` times the mean). A family of the user's
    with a divergence of its own is bracketed by doubling steps away from the mean and bisected on its
    ``unit_kl``.

Sub-Gaussian radius (Hoeffding)
    :math:`\sqrt{2\sigma_a^2\beta/N_a}`, with :math:`\sigma_a^2` the Gaussian variance, or :math:`1/4` for
    Bernoulli arms (rewards in [0, 1]). Poisson and exponential rewards are not sub-Gaussian: rules built
    on this radius (LUCB, UGapE, the LIL rules) refuse them.

LIL radius
    :math:`U(t, \omega)` of Jiang, Li, Qiao (2017), Lemma 2.1 and Section 5:
    :func:`allocopt.complexity.lil_radius`, scaled by each arm's :math:`\sigma_a` (the radius is linear in
    :math:`\sigma`). The rules evaluate it at integer sample counts only, thousands of times per run, so
    :func:`lil_radii_of_counts` reads :math:`U(n, \omega)` from a table over :math:`n = 1, 2, \dots` computed once
    per :math:`(\omega, \epsilon)` by the same function (elementwise, so every entry is the number the direct
    call gives; a test compares them).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Literal, cast

import numpy as np
from scipy import special

from ..._validation import as_choice, fail
from ...complexity.lil import LIL_FORMS, lil_radius
from ...exceptions import InvalidArgumentError
from ...families import Bernoulli, Exponential, ExponentialFamily, Gaussian, Poisson

__all__ = ["EXPLORATION_RATES", "BISECTION_STEPS", "check_exploration", "exploration_rate", "kl_bound",
           "unit_divergence_name",
           "subgaussian_variance", "subgaussian_radius", "lil_radii", "lil_radii_of_counts", "SUBGAUSSIAN_FAMILIES"]

EXPLORATION_RATES = ("heuristic", "kalyanakrishnan", "kaufmann", "gabillon")
"""Names of the exploration rates (see the module docstring)."""

BISECTION_STEPS = 62
"""Bisection steps of the KL bounds: the bracket shrinks by :math:`2^{-62}`, below double precision."""

_KAUFMANN_K1 = 405.5
_KAUFMANN_ALPHA = 1.1


def check_exploration(exploration: Any, func: str) -> None:
    """Validate an ``exploration`` argument: a name of :data:`EXPLORATION_RATES` or a callable."""
    if callable(exploration):
        return
    as_choice(exploration, func, "exploration", EXPLORATION_RATES)


def exploration_rate(exploration: str | Callable, t: Any, delta: float, n_arms: int) -> np.ndarray:
    r""":math:`\beta(t, \delta)` for every entry of ``t`` (pull counts, shape () or (R,)).

    Examples
    --------
    >>> round(float(exploration_rate("heuristic", 100, 0.01, 5)), 6)  # log((log 100 + 1)/0.01)
    6.32886
    >>> round(float(exploration_rate("kalyanakrishnan", 10, 0.1, 4)), 6)  # log(5 * 4 * 10**4 / 0.4)
    13.122363
    """
    t = np.asarray(t, dtype=float)
    if callable(exploration):
        return np.asarray(exploration(t, delta, n_arms), dtype=float)
    if exploration == "heuristic":
        return np.log((np.log(t) + 1.0) / delta)
    if exploration == "kalyanakrishnan":
        return math.log(5.0 * n_arms / (4.0 * delta)) + 4.0 * np.log(t)
    if exploration == "kaufmann":
        level = math.log(_KAUFMANN_K1 * n_arms / delta) + _KAUFMANN_ALPHA * np.log(t)
        return level + np.log(level)
    if exploration == "gabillon":
        return math.log(4.0 * n_arms / delta) + 3.0 * np.log(np.maximum(t - 1.0, 1.0))
    fail("exploration_rate", "exploration", "one of " + ", ".join(map(repr, EXPLORATION_RATES)) + " or a callable",
         exploration)


_GENERIC = "generic"


def unit_divergence_name(family: ExponentialFamily) -> str:
    """Which closed form of the unit divergence :math:`d_1` the bounds use: that of the built-in family whose
    ``unit_kl`` the family inherits (the gamma family has the exponential family's), else the family's own
    ``unit_kl`` (:data:`_GENERIC`). Decided by the divergence itself, never by the family's name."""
    own = type(family).unit_kl
    for builtin in (Gaussian, Bernoulli, Poisson, Exponential):
        if own is builtin.unit_kl:
            return builtin.name
    return _GENERIC


def _outer_end(name: str, family: ExponentialFamily, means: np.ndarray, level: np.ndarray,
               upper: np.ndarray) -> np.ndarray:
    """A point beyond the bound (or the domain's end) on the requested side of every mean, for unit divergence
    ``level``."""
    if name == "bernoulli":
        return np.where(upper, 1.0, 0.0)
    if name == "poisson":
        # q >= m: d(m, q) = m (x - 1 - log x) >= q/2 - m with x = q/m (log x <= x/2), >= level at q = 2(level + m)
        return np.where(upper, 2.0 * (level + means), 0.0)
    if name == "exponential":
        # q >= m: d >= log(q/m) - 1; q <= m: d >= m/(2q) - 1 (same inequality with x = m/q)
        return np.where(upper, means * np.exp(level + 1.0), means / (2.0 * (level + 1.0)))
    return _doubling_end(family, means, level, upper)


def _doubling_end(family: ExponentialFamily, means: np.ndarray, level: np.ndarray, upper: np.ndarray) -> np.ndarray:
    r"""A family's own outer end: the domain's end where it is finite, else :math:`\hat\mu \pm s 2^n` with
    :math:`s = \max(|\hat\mu|, 1)` and the first :math:`n` at which :math:`d_1(\hat\mu, \cdot) > ` level (the
    divergence grows away from the mean; at most 2100 doublings reach the end of the float range)."""
    end = np.where(upper, family.upper, family.lower)
    open_side = ~np.isfinite(end)
    if not open_side.any():
        return end
    step = np.maximum(np.abs(means), 1.0)
    sign = np.where(upper, 1.0, -1.0)
    point = np.where(open_side, means + sign * step, end)
    with np.errstate(all="ignore"):
        for _ in range(2100):
            short = open_side & np.isfinite(point) & ~(family.unit_kl(means, point) > level)
            if not short.any():
                break
            step = np.where(short, 2.0 * step, step)
            point = np.where(short, means + sign * step, point)
    return point


def _divergence_to(name: str, family: ExponentialFamily, means: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """``q -> d_1(means, q)`` with the terms that depend on ``means`` alone computed once (the bisection's inner
    loop: two logarithms per Bernoulli evaluation, one for Poisson and exponential)."""
    if name == "bernoulli":
        entropy = special.xlogy(means, means) + special.xlogy(1.0 - means, 1.0 - means)
        return lambda q: entropy - special.xlogy(means, q) - special.xlogy(1.0 - means, 1.0 - q)
    if name == "poisson":
        constant = special.xlogy(means, means) - means
        return lambda q: q + constant - special.xlogy(means, q)
    if name == "exponential":
        return lambda q: means / q - 1.0 - np.log(means / q)
    return lambda q: np.asarray(family.unit_kl(means, q), dtype=float)


def kl_bound(family: ExponentialFamily, means: Any, level: Any, upper: Any, dispersion: Any = 1.0) -> np.ndarray:
    r"""The KL confidence bound of every entry: upper where ``upper`` is True, lower elsewhere.

    The divergence is the family's, with its dispersion: :math:`d(x, y) = d_1(x, y)/\phi`, so the bound
    solves :math:`d_1(\hat\mu, q) = \phi\,	ext{level}` (Gaussian arms: :math:`\phi = \sigma^2`; gamma arms of
    shape :math:`lpha`: :math:`\phi = 1/lpha`; Bernoulli, Poisson and exponential arms: :math:`\phi = 1`).

    Parameters
    ----------
    family : ExponentialFamily
    means : array_like
        Empirical means (in the closure of the mean domain, e.g. a Bernoulli mean may be 0 or 1).
    level : array_like
        :math:`eta/N_a >= 0` (broadcast against ``means``).
    upper : bool or array of bool
        Which bound (broadcast against ``means``).
    dispersion : array_like
        The arms' dispersion :math:`\phi` (``RuleContext.dispersion``), broadcast against ``means``.

    Returns
    -------
    ndarray
        :math:`\max\{q \ge \hat\mu: d(\hat\mu, q) \le 	ext{level}\}` (upper) or the minimum (lower).

    Examples
    --------
    >>> from allocopt.families import Bernoulli, Gamma, Gaussian
    >>> float(kl_bound(Gaussian(0.25), 0.5, 2.0, True, 0.25))  # 0.5 + sqrt(2 * 0.25 * 2)
    1.5
    >>> q = float(kl_bound(Bernoulli(), 0.5, 0.1, True))
    >>> round(q, 10), round(float(Bernoulli().kl(0.5, q)), 12)
    (0.7128786315, 0.1)
    >>> family = Gamma(0.25)  # shape 1/4: dispersion 4, d(x, y) = (x/y - 1 - log(x/y)) / 4
    >>> q = float(kl_bound(family, 1.0, 0.1, True, family.dispersion))
    >>> round(float(family.kl(1.0, q)), 12)
    0.1
    """
    means, level, upper, dispersion = np.broadcast_arrays(
        np.asarray(means, dtype=float), np.asarray(level, dtype=float), np.asarray(upper, dtype=bool),
        np.asarray(dispersion, dtype=float))
    name = unit_divergence_name(family)
    if name == "gaussian":
        radius = np.sqrt(2.0 * dispersion * level)
        return np.where(upper, means + radius, means - radius)
    level = dispersion * level  # the unit divergence's level (exact for the dispersion 1 of most families)
    outer = _outer_end(name, family, means, level, upper)
    divergence = _divergence_to(name, family, means)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        at_end = family.unit_kl(means, outer) <= level
    feasible, infeasible = means.copy(), outer
    geometric = name == "exponential"
    # entries whose bound is the domain's end (e.g. a Bernoulli mean of 0 and its lower bound) bisect an empty
    # bracket at the end of the domain, where d may be 0/0: they are replaced by that end below
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(BISECTION_STEPS):
            middle = np.sqrt(feasible * infeasible) if geometric else 0.5 * (feasible + infeasible)
            inside = divergence(middle) <= level
            feasible = np.where(inside, middle, feasible)
            infeasible = np.where(inside, infeasible, middle)
    return np.where(at_end, outer, feasible)


SUBGAUSSIAN_FAMILIES = ("gaussian", "bernoulli")
"""The families whose rewards are sub-Gaussian with a known variance proxy (rules built on Hoeffding or LIL radii
declare them as their ``families``; the runners refuse the others)."""


def subgaussian_variance(family: ExponentialFamily, dispersion: np.ndarray, func: str) -> np.ndarray:
    r"""Per-arm sub-Gaussian variance :math:`\sigma_a^2`: the Gaussian variance, 1/4 for Bernoulli arms.

    Raises a clear error for the Poisson and exponential families (not sub-Gaussian).
    """
    if family.name == "gaussian":
        return np.asarray(dispersion, dtype=float)
    if family.name == "bernoulli":
        return np.full(np.shape(dispersion), 0.25)
    fail(func, "problem", "a gaussian or bernoulli problem (the rule's confidence radius assumes sub-Gaussian "
         "rewards: Gaussian with known variance, or rewards in [0, 1] with sigma = 1/2)", family.name)


def subgaussian_radius(counts: Any, beta: Any, variance: Any) -> np.ndarray:
    r""":math:`\sqrt{2\sigma_a^2\beta/N_a}` (Hoeffding's radius for :math:`\sigma`-sub-Gaussian rewards).

    Examples
    --------
    >>> float(subgaussian_radius(8, 4.0, 0.25))  # sqrt(2 * 0.25 * 4 / 8)
    0.5
    """
    return np.sqrt(2.0 * np.asarray(variance, dtype=float) * np.asarray(beta, dtype=float)
                   / np.asarray(counts, dtype=float))


def lil_radii(counts: Any, omega: float, eps: float, sigma: Any, form: str = "experiments") -> np.ndarray:
    r"""LIL radii :math:`U(N_a, \omega)` of :func:`allocopt.complexity.lil_radius`, for per-arm :math:`\sigma_a`.

    Examples
    --------
    >>> float(lil_radii([100], 0.01, 0.0, [0.5])[0]) == float(lil_radius(100, 0.01, 0.0, 0.5, form="experiments"))
    True
    """
    checked = cast(Literal["paper", "experiments"], as_choice(form, "lil_radii", "form", LIL_FORMS))
    return np.asarray(lil_radius(counts, omega, eps, 1.0, form=checked)) * np.asarray(sigma, dtype=float)


_LIL_TABLES: dict[tuple[float, float, str], np.ndarray] = {}
_LIL_TABLE_KEYS = 64  # tables kept per process (one per rule, confidence level and side in an experiment)
_LIL_TABLE_MAX = 2**22  # counts beyond this are computed directly


def _lil_table(omega: float, eps: float, form: str, largest: int) -> np.ndarray | None:
    r""":math:`U(n, \omega)` with :math:`\sigma = 1` for ``n = 0 .. size - 1`` (entry 0 NaN), ``size`` a power of
    two above ``largest``; None when the table would be too large or some count has no real radius."""
    key = (float(omega), float(eps), form)
    table = _LIL_TABLES.get(key)
    if table is not None and table.shape[0] > largest:
        return table
    if largest >= _LIL_TABLE_MAX:
        return None
    size = max(1024, 1 << int(largest).bit_length())
    try:
        values = lil_radius(np.arange(1, size), omega, eps, 1.0, form=cast(Literal["paper", "experiments"], form))
    except InvalidArgumentError:  # the direct call raises, or succeeds on larger counts only
        return None
    table = np.concatenate([[np.nan], np.asarray(values, dtype=float)])
    if len(_LIL_TABLES) >= _LIL_TABLE_KEYS:
        _LIL_TABLES.clear()
    _LIL_TABLES[key] = table
    return table


def lil_radii_of_counts(counts: Any, omega: float, eps: float, sigma: Any, form: str = "experiments") -> np.ndarray:
    r""":func:`lil_radii` at integer sample counts, read from a table of :math:`U(n, \omega)`, :math:`n \ge 1`.

    The table is :func:`allocopt.complexity.lil_radius` evaluated once on ``1, 2, ..., size - 1`` with
    :math:`\sigma = 1` (kept per process for each :math:`(\omega, \epsilon,` form), doubled when a count
    outgrows it) and the result is ``table[counts] * sigma``: the same elementwise operations as the direct call,
    so the same numbers, at the cost of a gather instead of two logarithms and a square root per arm and step.
    Counts that are not integers >= 1, or larger than :math:`2^{22}`, take :func:`lil_radii` itself.

    Examples
    --------
    >>> counts = np.array([[1, 7, 250], [3, 3, 9000]])
    >>> bool(np.array_equal(lil_radii_of_counts(counts, 1e-4, 0.01, [0.5, 0.5, 1.0]),
    ...                     lil_radii(counts, 1e-4, 0.01, [0.5, 0.5, 1.0])))
    True
    """
    checked = as_choice(form, "lil_radii_of_counts", "form", LIL_FORMS)
    array = np.asarray(counts)
    if array.size == 0 or not np.issubdtype(array.dtype, np.integer) or array.min() < 1:
        return lil_radii(counts, omega, eps, sigma, checked)
    table = _lil_table(omega, eps, checked, int(array.max()))
    if table is None:
        return lil_radii(counts, omega, eps, sigma, checked)
    return table[array] * np.asarray(sigma, dtype=float)
