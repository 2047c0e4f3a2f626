"""The Bernoulli family."""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from .base import (_FAR_EXPONENT, PAIR_ERROR, ConicPerspective, ExponentialFamily, PairDivergences, _anchored_exponents,
                   _entropy_divergence, _natural_gap, _natural_spread_error, _x_log1pmx, _xlogx)

__all__ = ["Bernoulli"]

class Bernoulli(ExponentialFamily):
    r"""Bernoulli rewards with mean :math:`x \in (0, 1)`.

    :math:`d(x, y) = x\log(x/y) + (1-x)\log((1-x)/(1-y))`, :math:`\eta = \log(x/(1-x))`,
    :math:`A(\eta) = \log(1 + e^\eta)`, :math:`A^*(x) = x\log x + (1-x)\log(1-x)`.

    ``kl`` accepts ``x`` in the closed interval [0, 1] (empirical means) and ``y`` in (0, 1).
    """

    name = "bernoulli"
    compiled_pair_family = "bernoulli"  # allocopt.families.kernels
    lower = 0.0
    upper = 1.0
    mean_requirement = "means in the open interval (0, 1)"

    @staticmethod
    def unit_kl(x, y):
        # p(x, y) + p(1 - x, 1 - y), p(a, b) = a log(a/b) - (a - b) >= 0 (see _entropy_divergence)
        x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        difference = x - y
        terms = _entropy_divergence(np.stack([x, 1.0 - x]), np.stack([y, 1.0 - y]), np.stack([difference, -difference]))
        return terms[0] + terms[1]

    @staticmethod
    def unit_kl_offset(x, offset):
        x, offset = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(offset, dtype=float))
        return Bernoulli._kl_terms(x, x + offset, -offset)

    @staticmethod
    def _kl_terms(x, y, difference):
        """d(x, y) given the exact difference x - y (y only enters multiplicatively)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios = np.stack([difference / y, -difference / (1.0 - y)])
            quadratic = difference * difference / (y * (1.0 - y))
        terms = _x_log1pmx(np.stack([x, 1.0 - x]), ratios)  # both logarithmic terms in one vectorised call
        return terms[0] + terms[1] + quadratic

    @staticmethod
    def unit_natural(x):
        x = np.asarray(x, dtype=float)
        return np.log(x) - np.log1p(-x)

    @staticmethod
    def unit_natural_difference(x, y):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        difference = x - y
        return np.log1p(difference / y) - np.log1p(-difference / (1.0 - y))

    @staticmethod
    def unit_mean_difference(eta, eta_difference, mean):
        # expit(eta + D) - expit(eta) = expm1(D) * expit(eta) * (1 - expit(eta + D))
        eta, eta_difference = np.asarray(eta, dtype=float), np.asarray(eta_difference, dtype=float)
        return np.expm1(eta_difference) * np.asarray(mean, dtype=float) * expit(-(eta + eta_difference))

    @staticmethod
    def unit_log_partition(eta):
        return np.logaddexp(0.0, np.asarray(eta, dtype=float))

    @staticmethod
    def unit_conjugate(x):
        x = np.asarray(x, dtype=float)
        return _xlogx(x) + _xlogx(1.0 - x)

    @staticmethod
    def unit_mean(eta):
        return expit(np.asarray(eta, dtype=float))

    @staticmethod
    def unit_variance(x):
        x = np.asarray(x, dtype=float)
        return x * (1.0 - x)

    @staticmethod
    def unit_variance_bound(low, high):
        low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        contains_half = (low <= 0.5) & (high >= 0.5)
        return np.where(contains_half, 0.25, np.maximum(low * (1.0 - low), high * (1.0 - high)))

    def pair_error_bound(self, kind, means):
        if kind != "budget":
            return float(PAIR_ERROR)
        natural = self.unit_natural(np.asarray(means, dtype=float))
        return _natural_spread_error(float(np.max(natural) - np.min(natural)))

    def unit_confidence_pair(self, theta_top, theta_bottom, share_top, share_bottom):
        # d(x, y) = p(x, y) + p(1 - x, 1 - y) with p(a, b) = a log(a/b) - (a - b) >= 0 (no cancellation between
        # the two terms); the complements of the means are exact (Sterbenz) or correctly rounded, and that of
        # m is the share-weighted sum 1 - m = s_i (1 - theta_i) + s_j (1 - theta_j), never 1 - m itself
        theta_top, theta_bottom = np.asarray(theta_top, dtype=float), np.asarray(theta_bottom, dtype=float)
        gap = theta_top - theta_bottom
        complement_top, complement_bottom = 1.0 - theta_top, 1.0 - theta_bottom
        point = share_top * theta_top + share_bottom * theta_bottom
        point_complement = share_top * complement_top + share_bottom * complement_bottom
        spread_top, spread_bottom = share_bottom * gap, -share_top * gap  # theta - m
        arrays = np.broadcast_arrays(theta_top, theta_bottom, complement_top, complement_bottom, point,
                                     point_complement, spread_top, spread_bottom)
        numerators = np.stack(arrays[:4])
        denominators = np.stack([arrays[4], arrays[4], arrays[5], arrays[5]])
        differences = np.stack([arrays[6], arrays[7], -arrays[6], -arrays[7]])
        terms = _entropy_divergence(numerators, denominators, differences)
        scale = 1.0 / np.sqrt(point * point_complement)
        return PairDivergences(terms[0] + terms[2], terms[1] + terms[3], point, spread_top * scale,
                               spread_bottom * scale)

    def unit_budget_pair(self, theta_top, theta_bottom, eta_top, eta_bottom, share_top, share_bottom):
        # eta_i - eta_j = log(theta_i/theta_j) + log((1-theta_j)/(1-theta_i)) from exact ratios, and the
        # exponents D_a = eta_bar - eta_a of both ends formed so that they differ by exactly that gap (one
        # common point, at which the cost is stationary). The point is anchored at the mean of larger share,
        # where |D| <= |gap|/2: with n = that mean, x = n e^D / q and 1 - x = (1 - n) / q, q = 1 - n + n e^D
        # (odds(x) = odds(n) e^D), both accurate; and x - theta_a = expm1(D_a) theta_a (1 - x)
        theta_top, theta_bottom = np.asarray(theta_top, dtype=float), np.asarray(theta_bottom, dtype=float)
        gap = theta_top - theta_bottom
        complement_top, complement_bottom = 1.0 - theta_top, 1.0 - theta_bottom
        natural_gap = _natural_gap(gap, np.minimum(theta_top, theta_bottom), np.minimum(complement_top, complement_bottom))
        exponent_top, exponent_bottom, top_is_anchor = _anchored_exponents(natural_gap, share_top, share_bottom)
        anchor = np.where(top_is_anchor, theta_top, theta_bottom)
        anchor_complement = np.where(top_is_anchor, complement_top, complement_bottom)
        scaled = anchor * np.exp(np.where(top_is_anchor, exponent_top, exponent_bottom))
        blend = anchor_complement + scaled
        point, point_complement = scaled / blend, anchor_complement / blend
        # x - theta = expm1(D) theta (1 - x) (relative precision of expm1(D): that of D, |D| eps for the far end);
        # above D = _FAR_EXPONENT (where expm1 would overflow) theta / x < e^-700, and x - theta is accurate as is
        exponents = np.stack(np.broadcast_arrays(exponent_top, exponent_bottom))
        means = np.stack(np.broadcast_arrays(theta_top, theta_bottom))
        offsets = np.expm1(np.minimum(exponents, _FAR_EXPONENT)) * means * point_complement
        far = exponents > _FAR_EXPONENT
        if far.any():
            np.copyto(offsets, point - means, where=far)
        arrays = np.broadcast_arrays(point, point_complement, theta_top, theta_bottom, complement_top,
                                     complement_bottom, offsets[0], offsets[1])
        numerators = np.stack([arrays[0], arrays[0], arrays[1], arrays[1]])
        denominators = np.stack(arrays[2:6])
        differences = np.stack([arrays[6], arrays[7], -arrays[6], -arrays[7]])
        terms = _entropy_divergence(numerators, denominators, differences)
        scale = np.sqrt(point * point_complement)
        return PairDivergences(terms[0] + terms[2], terms[1] + terms[3], point, -exponent_top * scale,
                               -exponent_bottom * scale)

    def conic_confidence_perspective(self, cp, total, moment, centre):
        # S d_1(M/S, c) = rel_entr(M, S c) + rel_entr(S - M, S (1 - c))
        return ConicPerspective(cp.rel_entr(moment, cp.multiply(centre, total))
                                + cp.rel_entr(total - moment, cp.multiply(1.0 - centre, total)), [])

    def conic_budget_perspective(self, cp, total, natural_moment, mean_centre, eta_centre):
        # S A~(N/S) = S log(1 - x_c + x_c e^(D/S)) - x_c D with D = N - S eta_c: t >= S log(...) is
        # (1 - x_c) e^(-t/S) + x_c e^((D - t)/S) <= 1, two exponential cones
        deviation = natural_moment - cp.multiply(eta_centre, total)
        n_pairs = total.shape[0]
        epigraph = cp.Variable(n_pairs)
        first, second = cp.Variable(n_pairs), cp.Variable(n_pairs)
        constraints = [cp.constraints.ExpCone(-epigraph, total, first),
                       cp.constraints.ExpCone(deviation - epigraph, total, second),
                       cp.multiply(1.0 - mean_centre, first) + cp.multiply(mean_centre, second) <= total]
        return ConicPerspective(epigraph - cp.multiply(mean_centre, deviation), constraints)

    def sample(self, means, size, rng):
        return (rng.random(size) < means).astype(float)
