r"""An independent judge of :math:`\Gamma^*` for two arms, at 50 digits (mpmath), from the mathematics of
Wang, Yang, You (2022) as restated in the spec's formulas only (no allocopt code).

For K = 2 (k = 1) there is one pair and :math:`\Gamma^* = \max_{\psi} C_{12}(\psi, 1 - \psi)`. The cost is
concave and, by the envelope theorem, :math:`dC/d\psi = d(\theta_1, m) - d(\theta_2, m)` at the infimum point
:math:`m = \psi\theta_1 + (1-\psi)\theta_2`, which moves monotonically across :math:`(\theta_2, \theta_1)`; so
the optimum is where :math:`d(\theta_1, m) = d(\theta_2, m)` (the Chernoff point) and
:math:`\Gamma^* = d(\theta_1, m^*)`. For the budget cost :math:`B_{12}` the infimum point :math:`x` has natural
parameter :math:`\psi\eta_1 + (1-\psi)\eta_2`, and :math:`\Gamma^* = d(x^*, \theta_1)` where
:math:`d(x^*, \theta_1) = d(x^*, \theta_2)`. Both roots are found by bisection (400 halvings at 60 digits).
Heteroscedastic Gaussian arms: :math:`\Gamma^* = (\theta_1-\theta_2)^2 / (2(\sigma_1+\sigma_2)^2)` (the maximum
of :math:`(\theta_1-\theta_2)^2/(2(\sigma_1^2/\psi + \sigma_2^2/(1-\psi)))` is at :math:`\psi \propto \sigma_1`).
"""

from __future__ import annotations

import mpmath as mp

mp.mp.dps = 60


def divergence(family: str, x, y, variance=1, shape=1):
    """d(x, y) = KL(P_x || P_y) of the spec's table (mean parameterisation), in mpmath."""
    x, y = mp.mpf(x), mp.mpf(y)
    if family == "gaussian":
        return (x - y) ** 2 / (2 * mp.mpf(variance))
    if family == "bernoulli":  # (log1p: 1 - x is 1 to 60 digits for means below 1e-60)
        return x * mp.log(x / y) + (1 - x) * (mp.log1p(-x) - mp.log1p(-y))
    if family == "poisson":
        return y - x + x * mp.log(x / y)
    if family in ("exponential", "gamma"):
        return mp.mpf(shape) * (x / y - 1 - mp.log(x / y))
    raise ValueError(family)


def natural(family: str, x):
    """eta(x) of the spec's table (unit dispersion)."""
    x = mp.mpf(x)
    return {"bernoulli": lambda: mp.log(x) - mp.log1p(-x), "poisson": lambda: mp.log(x),
            "exponential": lambda: -1 / x, "gamma": lambda: -1 / x, "gaussian": lambda: x}[family]()


def mean(family: str, eta):
    """The inverse of :func:`natural`."""
    return {"bernoulli": lambda: 1 / (1 + mp.exp(-eta)), "poisson": lambda: mp.exp(eta),
            "exponential": lambda: -1 / eta, "gamma": lambda: -1 / eta, "gaussian": lambda: eta}[family]()


def _bisect(sign, low, high, steps: int = 400):
    """The root of a function whose sign is ``sign(z)`` (negative at ``low``, positive at ``high``)."""
    for _ in range(steps):
        middle = (low + high) / 2
        if sign(middle) < 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def two_arm_optimum(family: str, theta_1: float, theta_2: float, kind: str = "confidence", variance=(1, 1),
                    shape: float = 1.0):
    r""":math:`\Gamma^*` of the two-arm instance (``theta_1 > theta_2``, k = 1), an mpmath number."""
    top, bottom = mp.mpf(theta_1), mp.mpf(theta_2)
    if family == "gaussian":
        deviation = mp.sqrt(mp.mpf(variance[0])) + mp.sqrt(mp.mpf(variance[1]))
        return (top - bottom) ** 2 / (2 * deviation**2)
    if kind == "confidence":  # d(theta_1, m) - d(theta_2, m) decreases from + to - as m goes from theta_2 up
        point = _bisect(lambda m: divergence(family, bottom, m, shape=shape) - divergence(family, top, m, shape=shape),
                        bottom, top)
        return divergence(family, top, point, shape=shape)
    eta_top, eta_bottom = natural(family, top), natural(family, bottom)
    eta = _bisect(lambda e: divergence(family, mean(family, e), bottom, shape=shape)
                  - divergence(family, mean(family, e), top, shape=shape), eta_bottom, eta_top)
    return divergence(family, mean(family, eta), top, shape=shape)
