"""The Gaussian family with known variance (one value, or one per arm)."""

from __future__ import annotations

import copy
import math

import numpy as np

from .._validation import as_float_array, fail
from .base import ArrayLike, PAIR_ERROR, ConicPerspective, ExponentialFamily, PairDivergences

__all__ = ["Gaussian"]

_VARIANCE_REQUIREMENT = "a finite number > 0 or a one-dimensional array of finite numbers > 0"


class Gaussian(ExponentialFamily):
    r"""Gaussian rewards with known variance :math:`\sigma^2` (one value, or one per arm).

    :math:`d(x, y) = (x - y)^2/(2\sigma^2)`, :math:`\eta = x/\sigma^2`, :math:`A(\eta) = \sigma^2\eta^2/2`,
    :math:`A^*(x) = x^2/(2\sigma^2)`.

    Parameters
    ----------
    variance : float or array_like of float
        :math:`\sigma^2 > 0`, a scalar or one value per arm (heteroscedastic arms).

    Examples
    --------
    >>> float(Gaussian(0.25).kl(0.51, 0.0))
    0.5202
    """

    name = "gaussian"
    compiled_pair_family = "gaussian"  # allocopt.families.kernels
    lower = -np.inf
    upper = np.inf
    mean_requirement = "finite real numbers"
    budget_equals_confidence = True  # eta_1(x) = x and d_1 is symmetric: B = C
    harmonic_confidence_costs = True  # d_1(x, y) = (x - y)^2 / 2
    mean_scaling_degree = 2
    has_dispersion_parameter = True

    def __init__(self, variance: float | ArrayLike = 1.0):
        if type(variance) is float:  # the common case, checked without numpy's reductions on a 0-d array
            array = np.array(variance) if math.isfinite(variance) and variance > 0 else None
        else:
            array = as_float_array(variance, "Gaussian", "variance", _VARIANCE_REQUIREMENT)
            if array.ndim > 1 or array.size == 0 or not np.all(np.isfinite(array)) or np.any(array <= 0):
                array = None
        if array is None:
            fail("Gaussian", "variance", _VARIANCE_REQUIREMENT, variance)
        array.setflags(write=False)
        self._variance = array

    @property
    def dispersion(self) -> np.ndarray:
        return self._variance

    @property
    def variance_parameter(self) -> np.ndarray:
        """The variance given at construction."""
        return self._variance

    def with_dispersion(self, dispersion):
        """This family (a copy, of the same class) with the variance ``dispersion``."""
        family = copy.copy(self)
        family._variance = Gaussian(dispersion)._variance
        return family

    @staticmethod
    def unit_kl(x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        return 0.5 * (x - y) ** 2

    @staticmethod
    def unit_kl_offset(x, offset):
        return 0.5 * np.asarray(offset, dtype=float) ** 2

    @staticmethod
    def unit_natural(x):
        return np.array(x, dtype=float)

    @staticmethod
    def unit_natural_difference(x, y):
        return np.asarray(x, dtype=float) - np.asarray(y, dtype=float)

    @staticmethod
    def unit_mean_difference(eta, eta_difference, mean):
        return np.array(eta_difference, dtype=float)

    @staticmethod
    def unit_log_partition(eta):
        return 0.5 * np.asarray(eta, dtype=float) ** 2

    @staticmethod
    def unit_conjugate(x):
        return 0.5 * np.asarray(x, dtype=float) ** 2

    @staticmethod
    def unit_mean(eta):
        return np.array(eta, dtype=float)

    @staticmethod
    def unit_variance(x):
        return np.ones_like(np.asarray(x, dtype=float))

    @staticmethod
    def unit_variance_bound(low, high):
        return np.ones(np.broadcast(np.asarray(low), np.asarray(high)).shape)

    def pair_error_bound(self, kind, means):
        return float(PAIR_ERROR)

    def unit_confidence_pair(self, theta_top, theta_bottom, share_top, share_bottom):
        theta_top, theta_bottom = np.asarray(theta_top, dtype=float), np.asarray(theta_bottom, dtype=float)
        gap = theta_top - theta_bottom
        spread_top, spread_bottom = share_bottom * gap, -share_top * gap  # theta - m
        return PairDivergences(0.5 * spread_top * spread_top, 0.5 * spread_bottom * spread_bottom,
                               theta_top - spread_top, spread_top, spread_bottom)

    def unit_budget_pair(self, theta_top, theta_bottom, eta_top, eta_bottom, share_top, share_bottom):
        return self.unit_confidence_pair(theta_top, theta_bottom, share_top, share_bottom)  # eta = x: B = C

    def conic_confidence_perspective(self, cp, total, moment, centre):
        # S d_1(M/S, c) = (M - S c)^2 / (2 S) <= t  as the rotated cone  ||(sqrt(2)(M - S c), S - t)|| <= S + t
        epigraph = cp.Variable(total.shape[0], nonneg=True)
        deviation = moment - cp.multiply(centre, total)
        return ConicPerspective(epigraph, [cp.SOC(total + epigraph, cp.vstack([np.sqrt(2.0) * deviation,
                                                                                total - epigraph]), axis=0)])

    def sample(self, means, size, rng):
        return rng.normal(means, np.sqrt(self._variance), size=size)

    def __repr__(self) -> str:
        value = self._variance.tolist()
        return f"Gaussian(variance={value!r})"
