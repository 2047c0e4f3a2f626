r"""One-parameter exponential families in mean parameterisation.

Each family provides, vectorised over numpy arrays,

* the Kullback-Leibler divergence :math:`d(x, y) = \mathrm{KL}(P_x \,\|\, P_y)` between the members of means
  ``x`` and ``y``,
* the natural parameter :math:`\eta(x)`, the log-partition function :math:`A(\eta)`, its convex conjugate
  :math:`A^*(x)` and the inverse link :math:`x = A'(\eta)`,
* the variance function :math:`V(x) = A''(\eta(x))`,
* validation of the means, and sampling.

The divergence is the Bregman divergence of :math:`A^*`:
:math:`d(x, y) = A^*(x) - A^*(y) - (A^*)'(y)(x - y)`.

.. list-table::
   :header-rows: 1

   * - family
     - :math:`d(x, y)`
     - :math:`\eta(x)`
     - :math:`A(\eta)`
     - :math:`A^*(x)`
   * - gaussian
     - :math:`(x-y)^2 / (2\sigma^2)`
     - :math:`x/\sigma^2`
     - :math:`\sigma^2\eta^2/2`
     - :math:`x^2/(2\sigma^2)`
   * - bernoulli
     - :math:`x\log\frac{x}{y} + (1-x)\log\frac{1-x}{1-y}`
     - :math:`\log\frac{x}{1-x}`
     - :math:`\log(1+e^\eta)`
     - :math:`x\log x + (1-x)\log(1-x)`
   * - poisson
     - :math:`y - x + x\log\frac{x}{y}`
     - :math:`\log x`
     - :math:`e^\eta`
     - :math:`x\log x - x`
   * - exponential
     - :math:`\frac{x}{y} - 1 - \log\frac{x}{y}`
     - :math:`-1/x`
     - :math:`-\log(-\eta)`
     - :math:`-1 - \log x`

Dispersion. The Gaussian family may carry one variance per arm. allocopt treats this as an exponential
dispersion model: every family has a *unit* divergence :math:`d_1` and a dispersion :math:`\phi` (the
Gaussian variance; 1 for the other families) with :math:`d = d_1 / \phi`, :math:`\eta = \eta_1/\phi`,
:math:`A(\eta) = A_1(\phi\eta)/\phi` and :math:`A^* = A^*_1/\phi`. The top-k layer uses the unit functions
with effective weights :math:`w_a = \psi_a / \phi_a`, which handles heteroscedastic Gaussian arms without
special cases.

Numerical accuracy. The divergences are evaluated without the first-order cancellation of the textbook
formulas (for instance Bernoulli :math:`x\log(x/y)` and :math:`(1-x)\log((1-x)/(1-y))` are each
:math:`O(|x-y|)` while their sum is :math:`O(|x-y|^2)`): they are written with
:math:`\log(1+r) - r` evaluated by a series for small :math:`r`, so that :math:`d(x, y)` keeps full relative
precision when :math:`x \approx y` (gaps of :math:`10^{-6}` and below).
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit

from ._validation import as_float_vector, describe, fail
from .exceptions import InvalidArgumentError, InvalidInstanceError

__all__ = [
    "ExponentialFamily",
    "Gaussian",
    "Bernoulli",
    "Poisson",
    "Exponential",
    "FAMILIES",
    "get_family",
    "log1pmx",
]

ArrayLike = Any

# log(1 + r) - r = -r^2/(2 + r) + 2 z^3 sum_{n >= 0} z^(2n) / (2n + 3) with z = r/(2 + r) (from
# log(1 + r) = 2 atanh(z)); for |r| < 0.05, |z| < 0.026 and six terms leave a truncation below 1e-19 relative.
_LOG1PMX_SERIES_RADIUS = 0.05
_ATANH_TAIL = tuple(1.0 / (2 * n + 3) for n in range(5, -1, -1))  # highest power first, for Horner


def log1pmx(r: ArrayLike) -> np.ndarray:
    r"""Accurate :math:`\log(1 + r) - r` for :math:`r > -1` (``-inf`` at ``r = -1``).

    For :math:`|r| < 0.05` it uses :math:`-r^2/(2+r) + 2z^3\sum_{n \ge 0} z^{2n}/(2n+3)`,
    :math:`z = r/(2+r)` (six terms, truncation below :math:`10^{-19}` relative); elsewhere the direct formula
    loses at most a factor :math:`2/|r| \le 40` of machine precision.
    """
    r = np.asarray(r, dtype=float)
    small = np.abs(r) < _LOG1PMX_SERIES_RADIUS
    with np.errstate(divide="ignore"):
        direct = np.log1p(r) - r
    if not small.any():
        return direct
    rs = np.where(small, r, 0.0)
    z = rs / (2.0 + rs)
    z2 = z * z
    tail = np.zeros_like(z)
    for coefficient in _ATANH_TAIL:
        tail = tail * z2 + coefficient
    series = 2.0 * z * z2 * tail - rs * rs / (2.0 + rs)
    return np.where(small, series, direct)


def _x_log1pmx(x: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``x * log1pmx(r)`` with the convention ``0 * log1pmx(-1) = 0``."""
    zero = x == 0
    if not zero.any():
        return x * log1pmx(r)
    value = log1pmx(np.where(zero, 0.0, r))
    return np.where(zero, 0.0, x * value)


def _xlogx(x: np.ndarray) -> np.ndarray:
    """``x log x`` with ``0 log 0 = 0``."""
    positive = x > 0
    return np.where(positive, x * np.log(np.where(positive, x, 1.0)), 0.0)


class ExponentialFamily(abc.ABC):
    """A one-parameter exponential family in mean parameterisation.

    Subclasses implement the unit-dispersion primitives (``unit_*``); the public methods divide by the
    dispersion (``1`` except for :class:`Gaussian`, where it is the variance).

    Attributes
    ----------
    name : str
        Short lower-case name, as accepted by :func:`get_family`.
    lower, upper : float
        The open interval of valid means.
    """

    name: ClassVar[str]
    lower: ClassVar[float]
    upper: ClassVar[float]
    mean_requirement: ClassVar[str]

    # ----------------------------------------------------------------------------------- unit primitives
    @staticmethod
    @abc.abstractmethod
    def unit_kl(x: ArrayLike, y: ArrayLike) -> np.ndarray:
        """Unit-dispersion divergence :math:`d_1(x, y)`."""

    @staticmethod
    @abc.abstractmethod
    def unit_kl_offset(x: ArrayLike, offset: ArrayLike) -> np.ndarray:
        r""":math:`d_1(x, x + \delta)` from the offset :math:`\delta`, with full relative precision however small
        :math:`\delta` is (the pair costs pass offsets computed without cancellation)."""

    @staticmethod
    @abc.abstractmethod
    def unit_natural(x: ArrayLike) -> np.ndarray:
        r"""Unit natural parameter :math:`\eta_1(x)`."""

    @staticmethod
    @abc.abstractmethod
    def unit_natural_difference(x: ArrayLike, y: ArrayLike) -> np.ndarray:
        r""":math:`\eta_1(x) - \eta_1(y)`, accurate when :math:`x \approx y`."""

    @staticmethod
    @abc.abstractmethod
    def unit_mean_difference(eta: ArrayLike, eta_difference: ArrayLike, mean: ArrayLike) -> np.ndarray:
        r""":math:`A_1'(\eta + \Delta) - A_1'(\eta)` for ``eta_difference`` :math:`\Delta`, given
        ``mean`` :math:`= A_1'(\eta)`, accurate when :math:`\Delta` is small."""

    @staticmethod
    @abc.abstractmethod
    def unit_log_partition(eta: ArrayLike) -> np.ndarray:
        r"""Unit log-partition :math:`A_1(\eta)`."""

    @staticmethod
    @abc.abstractmethod
    def unit_conjugate(x: ArrayLike) -> np.ndarray:
        r"""Unit conjugate :math:`A_1^*(x)`."""

    @staticmethod
    @abc.abstractmethod
    def unit_mean(eta: ArrayLike) -> np.ndarray:
        r"""Inverse link :math:`A_1'(\eta)` (mean of the unit member with natural parameter :math:`\eta`)."""

    @staticmethod
    @abc.abstractmethod
    def unit_variance(x: ArrayLike) -> np.ndarray:
        r"""Unit variance function :math:`V_1(x) = A_1''(\eta_1(x))`."""

    @staticmethod
    @abc.abstractmethod
    def unit_variance_bound(low: ArrayLike, high: ArrayLike) -> np.ndarray:
        r""":math:`\max_{z \in [\mathrm{low}, \mathrm{high}]} V_1(z)`.

        Since :math:`d_1(x, y) = \int_y^x (x - z)/V_1(z)\,dz`, it gives the lower bound
        :math:`d_1(x, y) \ge (x - y)^2 / (2 \max_{[x, y]} V_1)` used to prune pair costs.
        """

    @abc.abstractmethod
    def sample(self, means: ArrayLike, size: Any, rng: np.random.Generator) -> np.ndarray:
        """Draw rewards of the members with the given means (shape ``size`` broadcast with ``means``)."""

    # ------------------------------------------------------------------------------------- dispersion
    @property
    def dispersion(self) -> np.ndarray:
        """Dispersion :math:`\\phi` (a 0-d array, or one value per arm for heteroscedastic Gaussian)."""
        return np.asarray(1.0)

    @property
    def is_heteroscedastic(self) -> bool:
        """Whether the dispersion differs between arms."""
        return self.dispersion.ndim == 1

    def arm_dispersion(self, n_arms: int, func: str = "allocopt") -> np.ndarray:
        """The dispersion of each of ``n_arms`` arms, shape ``(n_arms,)``."""
        dispersion = self.dispersion
        if dispersion.ndim == 0:
            return np.full(n_arms, float(dispersion))
        if dispersion.shape[0] != n_arms:
            fail(func, "variance", f"a positive number or one positive number per arm ({n_arms} values)",
                 dispersion)
        return dispersion.astype(float, copy=True)

    # ---------------------------------------------------------------------------------- public functions
    def kl(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        r""":math:`d(x, y) = \mathrm{KL}(P_x \| P_y)`, vectorised (broadcasts against the dispersion)."""
        return self.unit_kl(x, y) / self.dispersion

    def natural(self, x: ArrayLike) -> np.ndarray:
        r"""Natural parameter :math:`\eta(x)`."""
        return self.unit_natural(x) / self.dispersion

    def log_partition(self, eta: ArrayLike) -> np.ndarray:
        r"""Log-partition function :math:`A(\eta)`."""
        dispersion = self.dispersion
        return self.unit_log_partition(dispersion * np.asarray(eta, dtype=float)) / dispersion

    def conjugate(self, x: ArrayLike) -> np.ndarray:
        r"""Convex conjugate :math:`A^*(x)` of the log-partition function."""
        return self.unit_conjugate(x) / self.dispersion

    def mean(self, eta: ArrayLike) -> np.ndarray:
        r"""Mean :math:`A'(\eta)` of the member with natural parameter :math:`\eta`."""
        return self.unit_mean(self.dispersion * np.asarray(eta, dtype=float))

    def variance(self, x: ArrayLike) -> np.ndarray:
        r"""Variance :math:`\phi V_1(x)` of the member with mean ``x``."""
        return self.dispersion * self.unit_variance(x)

    def kl_grad_second(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        r""":math:`\partial d(x, y)/\partial y = (y - x)/(\phi V_1(y))`."""
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        return (y - x) / self.variance(y)

    def kl_grad_first(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        r""":math:`\partial d(x, y)/\partial x = \eta(x) - \eta(y)`."""
        return self.natural(x) - self.natural(y)

    # ---------------------------------------------------------------------------------------- validation
    def validate_means(self, means: ArrayLike, func: str, name: str = "theta") -> np.ndarray:
        """Check that ``means`` is a finite vector inside the family's mean domain; returns a float copy.

        Raises
        ------
        InvalidInstanceError
            Naming the argument, the domain and the offending entries.
        """
        array = as_float_vector(means, func, name)
        outside = np.flatnonzero(~((array > self.lower) & (array < self.upper)))
        if outside.size:
            raise InvalidInstanceError(
                f"The {name!r} parameter of {func} must be {self.mean_requirement} for the {self.name} family. "
                f"Got {describe(array)} instead (entries {outside.tolist()} are outside)."
            )
        return array

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and np.array_equal(self.dispersion, other.dispersion)  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.dispersion.tobytes()))


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
    lower = -np.inf
    upper = np.inf
    mean_requirement = "finite real numbers"

    def __init__(self, variance: float | ArrayLike = 1.0):
        array = np.array(variance, dtype=float, copy=True) if not isinstance(variance, str) else None
        if array is None or array.ndim > 1 or array.size == 0 or not np.all(np.isfinite(array)) or np.any(array <= 0):
            fail("Gaussian", "variance", "a finite number > 0 or a one-dimensional array of finite numbers > 0",
                 variance)
        array.setflags(write=False)
        self._variance = array

    @property
    def dispersion(self) -> np.ndarray:
        return self._variance

    @property
    def variance_parameter(self) -> np.ndarray:
        """The variance given at construction."""
        return self._variance

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

    def sample(self, means, size, rng):
        return rng.normal(means, np.sqrt(self._variance), size=size)

    def __repr__(self) -> str:
        value = self._variance.tolist()
        return f"Gaussian(variance={value!r})"


class Bernoulli(ExponentialFamily):
    r"""Bernoulli rewards with mean :math:`x \in (0, 1)`.

    :math:`d(x, y) = x\log(x/y) + (1-x)\log((1-x)/(1-y))`, :math:`\eta = \log(x/(1-x))`,
    :math:`A(\eta) = \log(1 + e^\eta)`, :math:`A^*(x) = x\log x + (1-x)\log(1-x)`.

    ``kl`` accepts ``x`` in the closed interval [0, 1] (empirical means) and ``y`` in (0, 1).
    """

    name = "bernoulli"
    lower = 0.0
    upper = 1.0
    mean_requirement = "means in the open interval (0, 1)"

    @staticmethod
    def unit_kl(x, y):
        x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        return Bernoulli._kl_terms(x, y, x - y)

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

    def sample(self, means, size, rng):
        return (rng.random(size) < means).astype(float)


class Poisson(ExponentialFamily):
    r"""Poisson rewards with mean :math:`x > 0`.

    :math:`d(x, y) = y - x + x\log(x/y)`, :math:`\eta = \log x`, :math:`A(\eta) = e^\eta`,
    :math:`A^*(x) = x\log x - x`. ``kl`` accepts ``x >= 0``.
    """

    name = "poisson"
    lower = 0.0
    upper = np.inf
    mean_requirement = "finite means > 0"

    @staticmethod
    def unit_kl(x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        return Poisson._kl_terms(x, y, x - y)

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

    def sample(self, means, size, rng):
        return rng.poisson(means, size=size).astype(float)


class Exponential(ExponentialFamily):
    r"""Exponential rewards with mean :math:`x > 0` (rate :math:`1/x`).

    :math:`d(x, y) = x/y - 1 - \log(x/y)`, :math:`\eta = -1/x`, :math:`A(\eta) = -\log(-\eta)`,
    :math:`A^*(x) = -1 - \log x`.
    """

    name = "exponential"
    lower = 0.0
    upper = np.inf
    mean_requirement = "finite means > 0"

    @staticmethod
    def unit_kl(x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = (x - y) / y
        return -log1pmx(r)

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
        return np.maximum(np.asarray(low, dtype=float), np.asarray(high, dtype=float)) ** 2

    def sample(self, means, size, rng):
        return rng.exponential(means, size=size)


FAMILIES: dict[str, type[ExponentialFamily]] = {
    cls.name: cls for cls in (Gaussian, Bernoulli, Poisson, Exponential)
}


def get_family(family: str | ExponentialFamily, variance: float | ArrayLike | None = None,
               func: str = "get_family") -> ExponentialFamily:
    """Resolve a family name (with its variance for ``"gaussian"``) or pass a family object through.

    Parameters
    ----------
    family : str or ExponentialFamily
        One of ``"gaussian"``, ``"bernoulli"``, ``"poisson"``, ``"exponential"``, or a family object.
    variance : float or array_like, optional
        Gaussian variance (scalar or one per arm; default 1). Other families have no variance parameter:
        passing a value other than ``None`` or ``1.0`` with them is an error, as is passing one together with a
        family object.
    func : str
        Name of the calling public function, used in error messages.
    """
    if isinstance(family, ExponentialFamily):
        if variance is not None and not (np.ndim(variance) == 0 and float(variance) == 1.0):
            raise InvalidArgumentError(
                f"The 'variance' parameter of {func} must be left at its default when 'family' is a family "
                f"object (the object carries its own variance). Got {describe(variance)} instead."
            )
        return family
    if not isinstance(family, str) or family.lower() not in FAMILIES:
        fail(func, "family", "one of " + ", ".join(repr(name) for name in FAMILIES) + " or an ExponentialFamily object",
             family)
    cls = FAMILIES[family.lower()]
    if cls is Gaussian:
        return Gaussian(1.0 if variance is None else variance)
    if variance is not None and not (np.ndim(variance) == 0 and np.isfinite(float(variance)) and float(variance) == 1.0):
        raise InvalidArgumentError(
            f"The 'variance' parameter of {func} applies to the gaussian family only; the {cls.name} family "
            f"has its variance fixed by its mean. Got {describe(variance)} instead."
        )
    return cls()
