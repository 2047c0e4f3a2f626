"""The Poisson family."""

from __future__ import annotations

import numpy as np

from .base import (PAIR_ERROR, ConicPerspective, ExponentialFamily, PairDivergences, _anchored_exponents,
                   _entropy_divergence, _natural_gap, _natural_spread_error, _x_log1pmx, _xlogx)

__all__ = ["Poisson"]

class Poisson(ExponentialFamily):
    r"""Poisson rewards with mean :math:`x > 0`.

    :math:`d(x, y) = y - x + x\log(x/y)`, :math:`\eta = \log x`, :math:`A(\eta) = e^\eta`,
    :math:`A^*(x) = x\log x - x`. ``kl`` accepts ``x >= 0``.
    """

    name = "poisson"
    compiled_pair_family = "poisson"  # allocopt.families.kernels
    lower = 0.0
    upper = np.inf
    mean_requirement = "finite means > 0"
    mean_scaling_degree = 1  # d_1(c x, c y) = c d_1(x, y)

    @staticmethod
    def unit_kl(x, y):
        x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        return _entropy_divergence(x, y, x - y)

    @staticmethod
    def unit_kl_offset(x, offset):
        x, offset = np.asarray(x, dtype=float), np.asarray(offset, dtype=float)
        return Poisson._kl_terms(x, x + offset, -offset)

    @staticmethod
    def _kl_terms(x, y, difference):
        with np.errstate(divide="ignore", invalid="ignore"):
            r = difference / y
            quadratic = difference * difference / y
        return _x_log1pmx(x, r) + quadratic

    @staticmethod
    def unit_natural(x):
        return np.log(np.asarray(x, dtype=float))

    @staticmethod
    def unit_natural_difference(x, y):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        return np.log1p((x - y) / y)

    @staticmethod
    def unit_mean_difference(eta, eta_difference, mean):
        return np.asarray(mean, dtype=float) * np.expm1(np.asarray(eta_difference, dtype=float))

    @staticmethod
    def unit_log_partition(eta):
        return np.exp(np.asarray(eta, dtype=float))

    @staticmethod
    def unit_conjugate(x):
        x = np.asarray(x, dtype=float)
        return _xlogx(x) - x

    @staticmethod
    def unit_mean(eta):
        return np.exp(np.asarray(eta, dtype=float))

    @staticmethod
    def unit_variance(x):
        return np.array(x, dtype=float)

    @staticmethod
    def unit_variance_bound(low, high):
        return np.maximum(np.asarray(low, dtype=float), np.asarray(high, dtype=float))

    def pair_error_bound(self, kind, means):
        if kind != "budget":
            return float(PAIR_ERROR)
        means = np.asarray(means, dtype=float)
        return _natural_spread_error(float(np.log(np.max(means) / np.min(means))))

    def unit_confidence_pair(self, theta_top, theta_bottom, share_top, share_bottom):
        # m as a share-weighted sum of positive means (never theta_i + offset, which loses the small mean when
        # the other one is many orders of magnitude larger)
        theta_top, theta_bottom = np.asarray(theta_top, dtype=float), np.asarray(theta_bottom, dtype=float)
        gap = theta_top - theta_bottom
        point = share_top * theta_top + share_bottom * theta_bottom
        spread_top, spread_bottom = share_bottom * gap, -share_top * gap  # theta - m
        arrays = np.broadcast_arrays(theta_top, theta_bottom, point, spread_top, spread_bottom)
        terms = _entropy_divergence(np.stack(arrays[:2]), arrays[2], np.stack(arrays[3:]))
        scale = 1.0 / np.sqrt(point)
        return PairDivergences(terms[0], terms[1], point, spread_top * scale, spread_bottom * scale)

    def unit_budget_pair(self, theta_top, theta_bottom, eta_top, eta_bottom, share_top, share_bottom):
        # x = theta_i exp(-s_j L) = theta_j exp(s_i L) with L = log(theta_i/theta_j) from the exact ratio; the
        # exponents D_a = log(x/theta_a) of both ends differ by exactly L (one common point, at which the
        # cost is stationary). x/theta_a is exp(D_a) at the end of larger share (|D_a| <= L/2) and the exact
        # ratio of the means times that at the other end (exp(D) there would turn the rounding of a large
        # D into a relative error); the divergences are theta (x/theta log(x/theta) - (x/theta - 1))
        theta_top, theta_bottom = np.asarray(theta_top, dtype=float), np.asarray(theta_bottom, dtype=float)
        gap = theta_top - theta_bottom
        natural_gap = _natural_gap(gap, np.minimum(theta_top, theta_bottom))
        exponent_top, exponent_bottom, top_is_anchor = _anchored_exponents(natural_gap, share_top, share_bottom)
        near = np.exp(np.where(top_is_anchor, exponent_top, exponent_bottom))
        mean_ratio = theta_top / theta_bottom
        with np.errstate(over="ignore"):  # the products of the branch not taken may overflow
            ratios = np.stack([np.where(top_is_anchor, near, near / mean_ratio),
                               np.where(top_is_anchor, near * mean_ratio, near)])  # x / theta
        exponents = np.stack(np.broadcast_arrays(exponent_top, exponent_bottom))
        relative = np.where(np.abs(exponents) < 0.5, np.expm1(exponents), ratios - 1.0)  # (x - theta)/theta
        means = np.stack(np.broadcast_arrays(theta_top, theta_bottom))
        terms = _entropy_divergence(means * ratios, means, means * relative, log_ratio=exponents)
        point = theta_top * ratios[0]
        scale = np.sqrt(point)
        return PairDivergences(terms[0], terms[1], point, -exponent_top * scale, -exponent_bottom * scale)

    def conic_confidence_perspective(self, cp, total, moment, centre):
        # S d_1(M/S, c) = rel_entr(M, S c) + S c - M
        return ConicPerspective(cp.rel_entr(moment, cp.multiply(centre, total)) + cp.multiply(centre, total) - moment,
                                [])

    def conic_budget_perspective(self, cp, total, natural_moment, mean_centre, eta_centre):
        # S A~(N/S) = x_c (S e^(D/S) - S - D) with D = N - S eta_c: S e^(D/S) <= t is one exponential cone
        deviation = natural_moment - cp.multiply(eta_centre, total)
        epigraph = cp.Variable(total.shape[0])
        return ConicPerspective(cp.multiply(mean_centre, epigraph - total - deviation),
                                [cp.constraints.ExpCone(deviation, total, epigraph)])

    def sample(self, means, size, rng):
        return rng.poisson(means, size=size).astype(float)
