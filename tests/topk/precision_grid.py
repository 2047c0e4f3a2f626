"""The grid of extreme pairs on which the cost kernels are checked against 50-digit mpmath."""

from __future__ import annotations

import itertools

import numpy as np

# means of each family over its whole valid domain: Bernoulli within 1e-15 of both ends, Poisson and
# exponential over 300 decades (any two of them within a ratio of 1e300), Gaussian as before
_BERNOULLI = [1e-15, 3e-13, 1e-9, 1e-6, 1e-3, 0.2, 0.5, 0.7, 1 - 1e-3, 1 - 1e-6, 1 - 1e-9, 1 - 3e-13, 1 - 1e-15]
_POSITIVE = [1e-150, 1e-100, 1e-30, 1e-9, 1e-3, 0.7, 1.0, 3.0, 1e3, 1e9, 1e30, 1e100, 1e150]
_GAUSSIAN = [-1e3, -2.5, -1e-3, 0.0, 1e-6, 0.3, 1.0, 1e3]
# ratios w_top / w_bottom: optimal allocations of extreme instances have shares down to ~1e-13
WEIGHT_RATIOS = [1e-13, 1e-6, 0.05, 1.0, 7.0, 1e5, 1e13]


def _near_ties(values, family):
    """Pairs of nearly tied means around each value (relative gaps 1e-4 and 1e-10, inside the domain)."""
    pairs = []
    for value, gap in itertools.product(values, (1e-4, 1e-10)):
        if family == "bernoulli" and value > 0.5:
            other = 1 - (1 - value) * (1 + gap)  # move the complement, which is what is small
        elif family == "gaussian":
            other = value - gap * max(abs(value), 1.0)
        else:
            other = value * (1 - gap)
        if other != value and (family != "bernoulli" or 0 < other < 1):
            pairs.append((max(value, other), min(value, other)))
    return pairs


def mean_pairs(family: str) -> list[tuple[float, float]]:
    """(theta_top, theta_bottom) pairs, theta_top > theta_bottom."""
    values = {"bernoulli": _BERNOULLI, "poisson": _POSITIVE, "exponential": _POSITIVE, "gaussian": _GAUSSIAN}[family]
    pairs = [(high, low) for high, low in itertools.combinations(sorted(values, reverse=True), 2)
             if family in ("bernoulli", "gaussian") or high / low <= 1e300]
    return pairs + _near_ties(values, family)


def grid(family: str):
    """Arrays (theta_top, theta_bottom, w_top, w_bottom) of the grid (weights summing to one)."""
    rows = [(high, low, ratio / (1 + ratio), 1 / (1 + ratio))
            for (high, low), ratio in itertools.product(mean_pairs(family), WEIGHT_RATIOS)]
    return tuple(np.array(column) for column in zip(*rows))
