"""The exponential family and the gamma family of known shape (an exponential dispersion model with the exponential
family's unit functions)."""

from __future__ import annotations

import copy
import math

import numpy as np

from .._validation import as_float, fail
from .base import PAIR_ERROR, ConicPerspective, ExponentialFamily, PairDivergences, _ratio_divergence, log1pmx

__all__ = ["Exponential", "Gamma"]

class Exponential(ExponentialFamily):
    r"""Exponential rewards with mean :math:`x > 0` (rate :math:`1/x`).

    :math:`d(x, y) = x/y - 1 - \log(x/y)`, :math:`\eta = -1/x`, :math:`A(\eta) = -\log(-\eta)`,
    :math:`A^*(x) = -1 - \log x`.
    """

    name = "exponential"
    compiled_pair_family = "exponential"  # allocopt.families.kernels
    lower = 0.0
    upper = np.inf
    mean_requirement = "finite means > 0"
    # d_1 depends on x/y only (degree 0): the solvers scale the means so that the largest lies in [1/2, 1), which
    # keeps the closed-form pruning bounds (squares of the means) within the floating-point range
    mean_scaling_degree = 0

    @staticmethod
    def unit_kl(x, y):
        x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        return _ratio_divergence(x / y, (x - y) / y)

    @staticmethod
    def unit_kl_offset(x, offset):
        x, offset = np.asarray(x, dtype=float), np.asarray(offset, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = -offset / (x + offset)
        return -log1pmx(r)

    @staticmethod
    def unit_natural(x):
        return -1.0 / np.asarray(x, dtype=float)

    @staticmethod
    def unit_natural_difference(x, y):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        return (x - y) / (x * y)

    @staticmethod
    def unit_mean_difference(eta, eta_difference, mean):
        # -1/(eta + D) + 1/eta = D / (eta (eta + D))
        eta, eta_difference = np.asarray(eta, dtype=float), np.asarray(eta_difference, dtype=float)
        return eta_difference / (eta * (eta + eta_difference))

    @staticmethod
    def unit_log_partition(eta):
        return -np.log(-np.asarray(eta, dtype=float))

    @staticmethod
    def unit_conjugate(x):
        return -1.0 - np.log(np.asarray(x, dtype=float))

    @staticmethod
    def unit_mean(eta):
        return -1.0 / np.asarray(eta, dtype=float)

    @staticmethod
    def unit_variance(x):
        return np.asarray(x, dtype=float) ** 2

    @staticmethod
    def unit_variance_bound(low, high):
        with np.errstate(over="ignore", under="ignore"):
            return np.maximum(np.asarray(low, dtype=float), np.asarray(high, dtype=float)) ** 2

    def unit_deviation_bound(self, low, high):
        return np.maximum(np.asarray(low, dtype=float), np.asarray(high, dtype=float))

    def pair_error_bound(self, kind, means):
        return float(PAIR_ERROR)  # harmonic and arithmetic means of positive numbers: no large exponents

    def unit_confidence_pair(self, theta_top, theta_bottom, share_top, share_bottom):
        theta_top, theta_bottom = np.asarray(theta_top, dtype=float), np.asarray(theta_bottom, dtype=float)
        gap = theta_top - theta_bottom
        point = share_top * theta_top + share_bottom * theta_bottom
        spread_top, spread_bottom = share_bottom * gap, -share_top * gap  # theta - m
        arrays = np.broadcast_arrays(theta_top, theta_bottom, spread_top, spread_bottom)
        relative = np.stack(arrays[2:]) / point  # (theta - m) / m
        terms = _ratio_divergence(np.stack(arrays[:2]) / point, relative)
        return PairDivergences(terms[0], terms[1], point, relative[0], relative[1])

    def unit_budget_pair(self, theta_top, theta_bottom, eta_top, eta_bottom, share_top, share_bottom):
        # x = 1/(s_i/theta_i + s_j/theta_j) = theta_i theta_j / q with q = s_i theta_j + s_j theta_i > 0, so
        # x/theta_i = theta_j/q and (x - theta_i)/theta_i = -s_j (theta_i - theta_j)/q exactly up to roundings
        theta_top, theta_bottom = np.asarray(theta_top, dtype=float), np.asarray(theta_bottom, dtype=float)
        gap = theta_top - theta_bottom
        blend = share_top * theta_bottom + share_bottom * theta_top
        arrays = np.broadcast_arrays(theta_bottom, theta_top, -share_bottom * gap, share_top * gap)
        ratios = np.stack(arrays[:2]) / blend  # x / theta_i, x / theta_j
        relative = np.stack(arrays[2:]) / blend  # (x - theta) / theta
        terms = _ratio_divergence(ratios, relative)
        return PairDivergences(terms[0], terms[1], theta_top * ratios[0], -relative[0], -relative[1])

    def conic_confidence_perspective(self, cp, total, moment, centre):
        # S d_1(M/S, c) = rel_entr(S, M/c) + M/c - S
        scaled = cp.multiply(1.0 / centre, moment)
        return ConicPerspective(cp.rel_entr(total, scaled) + scaled - total, [])

    def conic_budget_perspective(self, cp, total, natural_moment, mean_centre, eta_centre):
        # S A~(N/S) = N/eta_c - S + rel_entr(S, N/eta_c)  (A_1(eta) = -log(-eta), x_c = -1/eta_c)
        scaled = cp.multiply(1.0 / eta_centre, natural_moment)
        return ConicPerspective(cp.rel_entr(total, scaled) + scaled - total, [])

    def sample(self, means, size, rng):
        return rng.exponential(means, size=size)


class Gamma(Exponential):
    r"""Gamma rewards with known shape :math:`\alpha > 0` and mean :math:`x > 0` (scale :math:`x/\alpha`).

    An exponential dispersion model with the exponential family's unit functions and dispersion
    :math:`\phi = 1/\alpha`: :math:`d(x, y) = \alpha\,(x/y - 1 - \log(x/y))`, :math:`\eta = -\alpha/x`,
    variance :math:`x^2/\alpha`. Shape 1 is the exponential family. Every pair cost is :math:`\alpha` times the
    exponential family's at the same means and allocation, so :math:`\Gamma^*` scales by :math:`\alpha` and
    the optimal allocation is the same.

    Parameters
    ----------
    shape : float
        :math:`\alpha`, finite and > 0.

    Examples
    --------
    >>> family = Gamma(shape=3.0)
    >>> float(family.kl(2.0, 1.0)) == 3.0 * float(Exponential().kl(2.0, 1.0))
    True
    >>> float(family.variance(2.0))  # x^2 / alpha
    1.3333333333333333
    """

    name = "gamma"
    has_dispersion_parameter = True

    def __init__(self, shape: float = 1.0):
        try:
            value = float(shape)
        except (TypeError, ValueError):
            value = math.nan
        if isinstance(shape, (str, bool)) or not (math.isfinite(value) and value > 0):
            fail("Gamma", "shape", "a finite number > 0", shape)
        self._shape = value

    @property
    def shape(self) -> float:
        """The shape :math:`\alpha`."""
        return self._shape

    @property
    def dispersion(self) -> np.ndarray:
        """:math:`1/\alpha`."""
        return np.asarray(1.0 / self._shape)

    def with_dispersion(self, dispersion):
        """This family (a copy, of the same class) with the shape ``1/dispersion``."""
        requirement = "one finite number > 0 (the gamma shape is common to the arms)"
        if np.ndim(dispersion) != 0:
            fail("Gamma.with_dispersion", "dispersion", requirement, dispersion)
        value = as_float(dispersion, "Gamma.with_dispersion", "dispersion", low=0.0, low_open=True,
                         requirement=requirement)
        family = copy.copy(self)
        family._shape = Gamma(1.0 / value)._shape
        return family

    def sample(self, means, size, rng):
        return rng.gamma(self._shape, np.asarray(means, dtype=float) / self._shape, size=size)

    def __repr__(self) -> str:
        return f"Gamma(shape={self._shape:g})"
