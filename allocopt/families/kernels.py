r"""Compiled (numba) scalar twins of the built-in families' unit pair kernels.

Each function here evaluates one pair of :meth:`~allocopt.families.ExponentialFamily.unit_confidence_pair` or
:meth:`~allocopt.families.ExponentialFamily.unit_budget_pair` for scalar means and shares, and returns the five
numbers of :class:`~allocopt.families.PairDivergences` as a tuple ``(top, bottom, point, hessian_factor_top,
hessian_factor_bottom)``. They do the floating-point operations of the numpy kernels of
:mod:`allocopt.families` in the same order, with the same branches: :math:`\mathrm{log1pmx}(r) = \log(1 + r) - r`
by its atanh series for :math:`|r| < 0.05`, the entropy terms :math:`a\log(a/b) - (a - b)` in the near form
:math:`a\,\mathrm{log1pmx}(r) + (a - b)r` for :math:`-1/2 \le r \le 1` and directly elsewhere, the exponential
ratio divergence :math:`t - 1 - \log t` from :math:`t - 1`, complements of Bernoulli points as share-weighted
sums, and the anchored exponents of the budget points.

A family hands out its kernel through :meth:`~allocopt.families.ExponentialFamily.compiled_pair` (``None`` for a
family without one: a user-defined family keeps the generic numpy path).

What is guaranteed. Additions, multiplications, divisions and square roots are IEEE operations in both (no
fast-math, so no reassociation or fused multiply-add), so the two agree bit for bit wherever the transcendental
functions (``log``, ``log1p``, ``exp``, ``expm1``) agree; numba calls the C library's, numpy its own loops, which
on CPUs with AVX-512 differ in the last ulp for some inputs. Each kernel is a short fixed sequence of operations
without cancellation beyond a factor 6 (see :func:`allocopt.families.base._entropy_divergence`), so each last-ulp
difference in a transcendental function moves the result by a few ulps (with numpy's results moved one ulp on half
of the inputs, up to 19 ulps on the tests' grids). What holds on every machine: each kernel is within the family's
:meth:`~allocopt.families.ExponentialFamily.pair_error_bound` of the exact value (tested against a 420-digit mpmath
evaluation on adversarial grids: ties and near ties, means within :math:`10^{-15}` of the ends of the domain, tiny
shares), so the compiled and the numpy kernels agree within twice that bound.

The kernels are built on first use and follow :func:`allocopt._numba.compiled_enabled` (the
engine's switch); :func:`pair_kernel` returns ``None`` when they are off or numba is unavailable.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._numba import compile_once, compiled_enabled

__all__ = ["pair_kernel", "pair_arrays", "kernel_code", "pair_code", "pair_by_code", "weighted_pair", "unit_divergence"]

_LOG1PMX_SERIES_RADIUS = 0.05
# the coefficients 1/(2n + 3), highest power first (allocopt.families.base._ATANH_TAIL)
_T0, _T1, _T2, _T3, _T4, _T5 = (1.0 / (2 * n + 3) for n in range(5, -1, -1))

_FAR_EXPONENT = 700.0  # allocopt.families.base._FAR_EXPONENT

# (family name, kind) -> name of the scalar function below
_PAIR_FUNCTIONS = {
    ("gaussian", "confidence"): "_gaussian_pair",
    ("gaussian", "budget"): "_gaussian_pair",
    ("bernoulli", "confidence"): "_bernoulli_confidence",
    ("bernoulli", "budget"): "_bernoulli_budget",
    ("poisson", "confidence"): "_poisson_confidence",
    ("poisson", "budget"): "_poisson_budget",
    ("exponential", "confidence"): "_exponential_confidence",
    ("exponential", "budget"): "_exponential_budget",
}


def pair_kernel(family_name: str, kind: str):
    """The compiled scalar pair kernel of a built-in family (by its unit functions' name: ``"gamma"`` uses
    ``"exponential"``), or ``None`` when there is none or the compiled kernels are off."""
    name = _PAIR_FUNCTIONS.get((family_name, kind))
    if name is None or not _enabled():
        return None
    return _kernels()[name]


def _enabled() -> bool:
    return compiled_enabled()


# helpers first: the kernels call them by their global names, as they call the pair functions, pair_by_code and
# weighted_pair
_PAIR_NAMES = tuple(sorted(set(_PAIR_FUNCTIONS.values())))
_kernels = compile_once(
    globals(),
    rebind=("_log1pmx", "_entropy", "_ratio_divergence", "_anchored", *_PAIR_NAMES, ("pair_by_code", "_pair_by_code"),
            ("weighted_pair", "_weighted_pair"), "unit_divergence"),
    kernels={**{name: name for name in _PAIR_NAMES}, "by_code": "pair_by_code", "weighted": "weighted_pair",
             "loop": "_pair_loop"})


# the kernels by number, for compiled callers that select the family at run time (a function passed as an
# argument costs numba about 10 µs of typing per call, more than a small solve): pair_by_code(code, ...)
# evaluates kernel number `code`
_CODES = ("_gaussian_pair", "_bernoulli_confidence", "_bernoulli_budget", "_poisson_confidence", "_poisson_budget",
          "_exponential_confidence", "_exponential_budget")


def pair_code(family_name: str, kind: str) -> int | None:
    """``kernel_code(pair_kernel(family_name, kind))`` without fetching the kernel (a dictionary lookup and the
    switch): the number of the compiled pair kernel of a built-in family, or ``None`` when there is none or the
    compiled kernels are off.

    Examples
    --------
    >>> from allocopt._numba import compiled_kernels
    >>> with compiled_kernels(True):
    ...     pair_code("poisson", "confidence") == kernel_code(pair_kernel("poisson", "confidence"))
    True
    """
    name = _PAIR_FUNCTIONS.get((family_name, kind))
    if name is None or not _enabled():
        return None
    return _CODE_OF_NAME[name]


def kernel_code(kernel) -> int | None:
    """The number under which :func:`pair_by_code` evaluates the compiled pair kernel ``kernel`` (as returned
    by :meth:`~allocopt.families.ExponentialFamily.compiled_pair`), or ``None`` for a kernel not defined here."""
    if kernel is None:
        return None
    code_of = _CODE_OF.get("codes")
    if code_of is None:  # one assignment publishes the whole table to other threads
        kernels = _kernels()
        code_of = _CODE_OF["codes"] = {kernels[name]: code for code, name in enumerate(_CODES)}
    return code_of.get(kernel)


_CODE_OF: dict[str, dict[Any, int]] = {}
_CODE_OF_NAME = {name: code for code, name in enumerate(_CODES)}


def _pair_by_code(code, theta_top, theta_bottom, share_top, share_bottom):
    if code == 0:
        return _gaussian_pair(theta_top, theta_bottom, share_top, share_bottom)
    if code == 1:
        return _bernoulli_confidence(theta_top, theta_bottom, share_top, share_bottom)
    if code == 2:
        return _bernoulli_budget(theta_top, theta_bottom, share_top, share_bottom)
    if code == 3:
        return _poisson_confidence(theta_top, theta_bottom, share_top, share_bottom)
    if code == 4:
        return _poisson_budget(theta_top, theta_bottom, share_top, share_bottom)
    if code == 5:
        return _exponential_confidence(theta_top, theta_bottom, share_top, share_bottom)
    return _exponential_budget(theta_top, theta_bottom, share_top, share_bottom)


def _weighted_pair(code, theta_top, theta_bottom, w_top, w_bottom):
    # allocopt.topk.pairs.pair_terms for one pair of effective weights: the shares w / (w_i + w_j) (1/2 each at
    # zero total), the cost w_i d_top + w_j d_bottom, and d_top, d_bottom (its derivatives in w_i, w_j)
    total = w_top + w_bottom
    if total <= 0:
        share_top = 0.5
        share_bottom = 0.5
    else:
        share_top = w_top / total
        share_bottom = w_bottom / total
    values = pair_by_code(code, theta_top, theta_bottom, share_top, share_bottom)
    return w_top * values[0] + w_bottom * values[1], values[0], values[1]


def unit_divergence(code, mean, x):
    r"""The unit divergence :math:`d_1(\text{mean}, x)` of the family of pair kernel ``code`` (confidence codes;
    :math:`d_1(x, \text{mean})` for budget codes), in the pair kernels' forms, which keep their relative precision
    for nearly equal arguments: :math:`(m - x)^2/2` (Gaussian), the Bernoulli sum of two entropy terms
    :math:`a\log(a/b) - (a - b)`, the Poisson one term, the exponential :math:`t - 1 - \log t` from :math:`t - 1`.
    The forms of the built-in families' ``unit_kl``, term for term (compiled callers call it by this module
    attribute)."""
    if code == 2 or code == 4 or code == 6:
        mean, x = x, mean
    if code == 0:
        return 0.5 * (mean - x) * (mean - x)
    if code == 1 or code == 2:
        return (_entropy(mean, x, mean - x, 0.0, False)
                + _entropy(1.0 - mean, 1.0 - x, x - mean, 0.0, False))
    if code == 3 or code == 4:
        return _entropy(mean, x, mean - x, 0.0, False)
    return _ratio_divergence(mean / x, (mean - x) / x)


# replaced by their compiled versions on first use of the kernels (compiled callers use them by these names)
pair_by_code = _pair_by_code
weighted_pair = _weighted_pair


# ---------------------------------------------------------------------------------------------- helpers
def _log1pmx(r):
    # allocopt.families.base.log1pmx: log1p(r) - r, or the atanh series -r^2/(2 + r) + 2 z^3 sum z^(2n)/(2n + 3)
    if abs(r) < _LOG1PMX_SERIES_RADIUS:
        denominator = r + 2.0
        z = r / denominator
        z2 = z * z
        tail = _T0
        tail = tail * z2 + _T1
        tail = tail * z2 + _T2
        tail = tail * z2 + _T3
        tail = tail * z2 + _T4
        tail = tail * z2 + _T5
        tail = tail * z2
        tail = tail * z
        tail = tail * 2.0
        return tail - r * r / denominator
    if r == -1.0:
        return -np.inf
    return math.log1p(r) - r


def _entropy(numerator, denominator, difference, log_ratio, has_log_ratio):
    # allocopt.families.base._entropy_divergence: a log(a/b) - (a - b)
    r = difference / denominator
    if r >= -0.5 and r <= 1.0:
        return _log1pmx(r) * numerator + r * difference
    if numerator == 0:
        return -difference
    if not has_log_ratio:
        log_ratio = math.log(numerator / denominator)
    return numerator * log_ratio - difference


def _ratio_divergence(ratio, relative_difference):
    # allocopt.families.base._ratio_divergence: t - 1 - log t
    if ratio < 0.5:
        return (ratio - 1.0) - math.log(ratio)
    return -_log1pmx(relative_difference)


def _anchored(natural_gap, share_top, share_bottom):
    # allocopt.families.base._anchored_exponents
    if share_bottom <= share_top:
        exponent_top = -share_bottom * natural_gap
        return exponent_top, exponent_top + natural_gap, True
    return share_top * natural_gap - natural_gap, share_top * natural_gap, False


# ------------------------------------------------------------------------------------------ pair kernels
def _gaussian_pair(theta_top, theta_bottom, share_top, share_bottom):
    gap = theta_top - theta_bottom
    spread_top, spread_bottom = share_bottom * gap, -share_top * gap
    return (0.5 * spread_top * spread_top, 0.5 * spread_bottom * spread_bottom, theta_top - spread_top,
            spread_top, spread_bottom)


def _bernoulli_confidence(theta_top, theta_bottom, share_top, share_bottom):
    gap = theta_top - theta_bottom
    complement_top, complement_bottom = 1.0 - theta_top, 1.0 - theta_bottom
    point = share_top * theta_top + share_bottom * theta_bottom
    point_complement = share_top * complement_top + share_bottom * complement_bottom
    spread_top, spread_bottom = share_bottom * gap, -share_top * gap
    term_top = _entropy(theta_top, point, spread_top, 0.0, False)
    term_bottom = _entropy(theta_bottom, point, spread_bottom, 0.0, False)
    term_top_complement = _entropy(complement_top, point_complement, -spread_top, 0.0, False)
    term_bottom_complement = _entropy(complement_bottom, point_complement, -spread_bottom, 0.0, False)
    scale = 1.0 / math.sqrt(point * point_complement)
    return (term_top + term_top_complement, term_bottom + term_bottom_complement, point, spread_top * scale,
            spread_bottom * scale)


def _bernoulli_budget(theta_top, theta_bottom, share_top, share_bottom):
    gap = theta_top - theta_bottom
    complement_top, complement_bottom = 1.0 - theta_top, 1.0 - theta_bottom
    size = abs(gap)
    natural_gap = math.copysign(math.log1p(size / min(theta_top, theta_bottom))
                                + math.log1p(size / min(complement_top, complement_bottom)), gap)
    exponent_top, exponent_bottom, top_is_anchor = _anchored(natural_gap, share_top, share_bottom)
    if top_is_anchor:
        anchor_complement = complement_top
        scaled = theta_top * math.exp(exponent_top)
    else:
        anchor_complement = complement_bottom
        scaled = theta_bottom * math.exp(exponent_bottom)
    blend = anchor_complement + scaled
    point, point_complement = scaled / blend, anchor_complement / blend
    # (allocopt.families.Bernoulli.unit_budget_pair: beyond _FAR_EXPONENT the offset is formed directly)
    offset_top = math.expm1(min(exponent_top, _FAR_EXPONENT)) * theta_top * point_complement
    if exponent_top > _FAR_EXPONENT:
        offset_top = point - theta_top
    offset_bottom = math.expm1(min(exponent_bottom, _FAR_EXPONENT)) * theta_bottom * point_complement
    if exponent_bottom > _FAR_EXPONENT:
        offset_bottom = point - theta_bottom
    term_top = _entropy(point, theta_top, offset_top, 0.0, False)
    term_bottom = _entropy(point, theta_bottom, offset_bottom, 0.0, False)
    term_top_complement = _entropy(point_complement, complement_top, -offset_top, 0.0, False)
    term_bottom_complement = _entropy(point_complement, complement_bottom, -offset_bottom, 0.0, False)
    scale = math.sqrt(point * point_complement)
    return (term_top + term_top_complement, term_bottom + term_bottom_complement, point, -exponent_top * scale,
            -exponent_bottom * scale)


def _poisson_confidence(theta_top, theta_bottom, share_top, share_bottom):
    gap = theta_top - theta_bottom
    point = share_top * theta_top + share_bottom * theta_bottom
    spread_top, spread_bottom = share_bottom * gap, -share_top * gap
    term_top = _entropy(theta_top, point, spread_top, 0.0, False)
    term_bottom = _entropy(theta_bottom, point, spread_bottom, 0.0, False)
    scale = 1.0 / math.sqrt(point)
    return term_top, term_bottom, point, spread_top * scale, spread_bottom * scale


def _poisson_budget(theta_top, theta_bottom, share_top, share_bottom):
    gap = theta_top - theta_bottom
    natural_gap = math.copysign(math.log1p(abs(gap) / min(theta_top, theta_bottom)), gap)
    exponent_top, exponent_bottom, top_is_anchor = _anchored(natural_gap, share_top, share_bottom)
    near = math.exp(exponent_top if top_is_anchor else exponent_bottom)
    mean_ratio = theta_top / theta_bottom
    if top_is_anchor:
        ratio_top, ratio_bottom = near, near * mean_ratio
    else:
        ratio_top, ratio_bottom = near / mean_ratio, near
    relative_top = math.expm1(exponent_top) if abs(exponent_top) < 0.5 else ratio_top - 1.0
    relative_bottom = math.expm1(exponent_bottom) if abs(exponent_bottom) < 0.5 else ratio_bottom - 1.0
    term_top = _entropy(theta_top * ratio_top, theta_top, theta_top * relative_top, exponent_top, True)
    term_bottom = _entropy(theta_bottom * ratio_bottom, theta_bottom, theta_bottom * relative_bottom,
                           exponent_bottom, True)
    point = theta_top * ratio_top
    scale = math.sqrt(point)
    return term_top, term_bottom, point, -exponent_top * scale, -exponent_bottom * scale


def _exponential_confidence(theta_top, theta_bottom, share_top, share_bottom):
    gap = theta_top - theta_bottom
    point = share_top * theta_top + share_bottom * theta_bottom
    relative_top, relative_bottom = share_bottom * gap / point, -share_top * gap / point
    term_top = _ratio_divergence(theta_top / point, relative_top)
    term_bottom = _ratio_divergence(theta_bottom / point, relative_bottom)
    return term_top, term_bottom, point, relative_top, relative_bottom


def _exponential_budget(theta_top, theta_bottom, share_top, share_bottom):
    gap = theta_top - theta_bottom
    blend = share_top * theta_bottom + share_bottom * theta_top
    ratio_top, ratio_bottom = theta_bottom / blend, theta_top / blend
    relative_top, relative_bottom = -share_bottom * gap / blend, share_top * gap / blend
    term_top = _ratio_divergence(ratio_top, relative_top)
    term_bottom = _ratio_divergence(ratio_bottom, relative_bottom)
    return term_top, term_bottom, theta_top * ratio_top, -relative_top, -relative_bottom


def _pair_loop(code, theta_top, theta_bottom, share_top, share_bottom, out):
    for index in range(theta_top.shape[0]):
        values = pair_by_code(code, theta_top[index], theta_bottom[index], share_top[index], share_bottom[index])
        for field in range(5):
            out[field, index] = values[field]


def pair_arrays(family_name: str, kind: str, theta_top, theta_bottom, share_top,
                share_bottom) -> np.ndarray | None:
    r"""The compiled pair kernel over arrays (broadcast together): an array of shape ``(5,) + shape`` holding
    ``top``, ``bottom``, ``point`` and the two Hessian factors (the fields of
    :class:`~allocopt.families.PairDivergences`), or ``None`` when there is no compiled kernel.

    Examples
    --------
    A Bernoulli pair at equal shares: the divergences to the midpoint 0.5 of 0.9 and 0.1 are equal, to
    :math:`0.9\log 1.8 + 0.1\log 0.2`.

    >>> import math
    >>> values = pair_arrays("bernoulli", "confidence", 0.9, 0.1, 0.5, 0.5)
    >>> values is None or bool(abs(values[0] - (0.9 * math.log(1.8) + 0.1 * math.log(0.2))) < 1e-15)
    True
    """
    code = kernel_code(pair_kernel(family_name, kind))
    if code is None:
        return None
    return pair_values(code, theta_top, theta_bottom, share_top, share_bottom)


def pair_values(code: int, theta_top, theta_bottom, share_top, share_bottom) -> np.ndarray:
    """:func:`pair_arrays` for the pair kernel numbered ``code`` (:func:`kernel_code`): the array of shape
    ``(5,) + shape`` of the five fields of :class:`~allocopt.families.PairDivergences`."""
    arrays = np.broadcast_arrays(*(np.asarray(value, dtype=float) for value in
                                   (theta_top, theta_bottom, share_top, share_bottom)))
    shape = arrays[0].shape
    flat = [np.ascontiguousarray(array).ravel() for array in arrays]
    out = np.empty((5, flat[0].shape[0]))
    _kernels()["loop"](code, flat[0], flat[1], flat[2], flat[3], out)
    return out.reshape((5,) + shape)
