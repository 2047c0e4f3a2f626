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

Capabilities. A family declares what holds for it mathematically, as cvxpy atoms declare their curvature
and sign, and the solvers ask these questions instead of testing the family's class:
:attr:`~ExponentialFamily.budget_equals_confidence` (:math:`B_{ij} = C_{ij}`),
:attr:`~ExponentialFamily.harmonic_confidence_costs` (:math:`1/C_{ij}` linear in :math:`1/\psi`, which gives
closed forms and one-pass exact surrogates; :meth:`~ExponentialFamily.harmonic_costs` per kind),
:attr:`~ExponentialFamily.mean_scaling_degree` and :attr:`~ExponentialFamily.has_dispersion_parameter` (how an
instance may be brought into floating-point range), :meth:`~ExponentialFamily.compiled_pair` (a compiled twin of
its pair kernels, used by the exact solver's double star and by DT-TS's KKT-Tracking), and its conic perspective for the CVXPY model
(:meth:`~ExponentialFamily.conic_confidence_perspective`, :meth:`~ExponentialFamily.conic_budget_perspective`).
The defaults claim nothing, so a new family is one subclass: the unit primitives, the sampler and, for the
CVXPY oracle, its perspectives.

Numerical accuracy. The divergences are evaluated without the first-order cancellation of the textbook
formulas (for instance Bernoulli :math:`x\log(x/y)` and :math:`(1-x)\log((1-x)/(1-y))` are each
:math:`O(|x-y|)` while their sum is :math:`O(|x-y|^2)`) and without cancellation for far-apart arguments:
Bernoulli and Poisson divergences are sums of the nonnegative terms :math:`a\log(a/b) - (a - b)`, each
evaluated with :math:`\log(1+r) - r` (series for small :math:`r`) near :math:`a = b` and directly elsewhere.
The pair kernels (:meth:`ExponentialFamily.unit_confidence_pair`, :meth:`ExponentialFamily.unit_budget_pair`)
keep full relative precision over the whole mean domain (Bernoulli means within :math:`10^{-15}` of 0 and 1,
means 300 decades apart), and :meth:`ExponentialFamily.pair_error_bound` states a bound on their error.
"""
from __future__ import annotations

import abc
from typing import Any, ClassVar, NamedTuple, NoReturn

import numpy as np

from .._validation import as_float_vector, describe, fail
from ..exceptions import InvalidInstanceError
from .kernels import pair_code, pair_kernel

__all__ = ["ExponentialFamily", "PairDivergences", "ConicPerspective", "log1pmx", "ArrayLike", "PAIR_ERROR",
           "GENERIC_PAIR_ERROR"]

ArrayLike = Any

# log(1 + r) - r = -r^2/(2 + r) + 2 z^3 sum_{n >= 0} z^(2n) / (2n + 3) with z = r/(2 + r) (from
# log(1 + r) = 2 atanh(z)); for |r| < 0.05, |z| < 0.026 and six terms leave a truncation below 1e-19 relative.
_LOG1PMX_SERIES_RADIUS = 0.05
_ATANH_TAIL = tuple(1.0 / (2 * n + 3) for n in range(5, -1, -1))  # highest power first, for Horner


# Relative error bounds of the pair kernels (see ExponentialFamily.pair_error_bound). Every kernel is a fixed
# sequence of a few dozen correctly rounded operations and libm calls (each within 1 ulp) on accurate inputs,
# with no cancellation beyond a factor 6 (see _entropy_divergence): the error analysis gives a few ulps, and
# 120-digit comparisons on grids covering the mean domains measure at most 8 ulps. PAIR_ERROR allows 32. The
# budget kernels of the Bernoulli and Poisson families in addition carry the rounding of exponents as large
# as the spread of the natural parameters (up to 70, resp. 690, for the extreme domains), each rounding
# costing |D| ulps: PAIR_ERROR + 4 eps * spread (measured: at most 1.3 eps * spread).
PAIR_ERROR = 32 * np.finfo(float).eps
GENERIC_PAIR_ERROR = 1e-10


# an exponent D above which e^D overflows in expm1 (709.78): the Bernoulli budget kernel then forms the offset of
# the point from the far mean directly (the mean is below e^-700 times the point)
_FAR_EXPONENT = 700.0


def _natural_spread_error(spread: float) -> float:
    """PAIR_ERROR plus four roundings of an exponent of magnitude ``spread``."""
    return float(PAIR_ERROR + 4 * np.finfo(float).eps * spread) if np.isfinite(spread) else np.inf


def log1pmx(r: ArrayLike) -> np.ndarray:
    r"""Accurate :math:`\log(1 + r) - r` for :math:`r > -1` (``-inf`` at ``r = -1``).

    For :math:`|r| < 0.05` it uses :math:`-r^2/(2+r) + 2z^3\sum_{n \ge 0} z^{2n}/(2n+3)`,
    :math:`z = r/(2+r)` (six terms, truncation below :math:`10^{-19}` relative); elsewhere the direct formula
    loses at most a factor :math:`2/|r| \le 40` of machine precision. (Written with in-place operations: the
    pair kernels call it on arrays of millions of entries, where temporaries cost more than arithmetic.)
    """
    r = np.asarray(r, dtype=float)
    result = np.empty_like(r)
    with np.errstate(divide="ignore"):
        np.log1p(r, out=result)
    result -= r
    small = np.abs(r) < _LOG1PMX_SERIES_RADIUS
    if not small.any():
        return result
    rs = np.where(small, r, 0.0)
    denominator = rs + 2.0
    z = rs / denominator
    z2 = z * z
    tail = np.full_like(z, _ATANH_TAIL[0])
    for coefficient in _ATANH_TAIL[1:]:
        tail *= z2
        tail += coefficient
    tail *= z2
    tail *= z
    tail *= 2.0
    rs *= rs
    rs /= denominator
    tail -= rs
    np.copyto(result, tail, where=small)
    return result


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


def _entropy_divergence(numerator: np.ndarray, denominator: np.ndarray, difference: np.ndarray,
                        log_ratio: np.ndarray | None = None) -> np.ndarray:
    r""":math:`a\log(a/b) - (a - b) \ge 0` for :math:`a, b > 0` (the unit Poisson divergence), to a few ulps.

    ``difference`` is :math:`a - b` (accurate); ``log_ratio`` may pass :math:`\log(a/b)` when the caller
    knows it exactly. With :math:`r = (a - b)/b`: for :math:`-1/2 \le r \le 1` the form
    :math:`a\,\mathrm{log1pmx}(r) + (a - b)r` (the two terms differ in sign by at most a factor 3),
    elsewhere :math:`a\log(a/b) - (a - b)` (the logarithm is at least 0.4 in magnitude there, so the
    subtraction loses at most a factor 6). The textbook grouping
    :math:`a\,\mathrm{log1pmx}(r) + (a-b)^2/b` used for every :math:`r` cancels catastrophically for
    :math:`|r| \gg 1`, which is where a Bernoulli complement or a Poisson mean is far from the other.
    """
    r = np.asarray(difference / denominator)
    near = (r >= -0.5) & (r <= 1.0)
    np.copyto(r, 0.0, where=~near)
    result = log1pmx(r)
    result *= numerator
    r *= difference
    result += r
    far = ~near
    if far.any():
        with np.errstate(divide="ignore", invalid="ignore"):  # a = 0 (empirical means): the limit b below
            if log_ratio is None:
                log_ratio = np.divide(numerator, denominator, out=np.ones_like(result), where=far)
                np.log(log_ratio, out=log_ratio, where=far)
            far_value = np.asarray(numerator * log_ratio)
        far_value -= difference
        np.copyto(far_value, -difference, where=numerator == 0)
        np.copyto(result, far_value, where=far)
    return result


def _ratio_divergence(ratio: np.ndarray, relative_difference: np.ndarray) -> np.ndarray:
    r""":math:`t - 1 - \log t \ge 0` (the unit exponential divergence of :math:`t = a/b`), given
    :math:`r = t - 1 = (a - b)/b` accurately: :math:`-\mathrm{log1pmx}(r)` for :math:`t \ge 1/2`, and the
    direct form below (no cancellation: :math:`-\log t > 0.69` dominates)."""
    far = ratio < 0.5
    result = log1pmx(np.where(far, 0.0, relative_difference))
    np.negative(result, out=result)
    if far.any():
        far_value = np.log(ratio, out=np.zeros_like(result), where=far)
        np.subtract(ratio - 1.0, far_value, out=far_value)
        np.copyto(result, far_value, where=far)
    return result


def _natural_gap(gap: np.ndarray, smaller: np.ndarray, smaller_complement: np.ndarray | None = None) -> np.ndarray:
    r""":math:`\log(\theta_i/\theta_j)` (plus :math:`\log((1-\theta_j)/(1-\theta_i))` when the smaller of the
    complements is given) from the difference ``gap`` :math:`= \theta_i - \theta_j` and the smaller mean:
    :math:`\pm\mathrm{log1p}(|\mathrm{gap}|/\min\theta)`, whose argument is positive (no cancellation, full
    relative precision for any ratio of the means)."""
    size = np.abs(gap)
    terms = np.log1p(size / smaller)
    if smaller_complement is not None:
        terms = terms + np.log1p(size / smaller_complement)
    return np.copysign(terms, gap)


def _anchored_exponents(natural_gap: np.ndarray, share_top: np.ndarray, share_bottom: np.ndarray):
    r"""The exponents :math:`\bar\eta - \eta_i = -s_j\Delta` and :math:`\bar\eta - \eta_j = s_i\Delta`
    (:math:`\Delta = \eta_i - \eta_j`) formed so that they differ by :math:`\Delta` to one rounding: the one
    of the end with the larger share (the *anchor*, :math:`|\cdot| \le |\Delta|/2`) by a product, the other
    from it. Returns ``(exponent_top, exponent_bottom, top_is_anchor)``."""
    top_is_anchor = share_bottom <= share_top
    exponent_top = np.where(top_is_anchor, -share_bottom * natural_gap, share_top * natural_gap - natural_gap)
    exponent_bottom = np.where(top_is_anchor, exponent_top + natural_gap, share_top * natural_gap)
    return exponent_top, exponent_bottom, top_is_anchor


class PairDivergences(NamedTuple):
    r"""The divergences of a batch of pairs to their infimum point, in unit dispersion.

    For shares :math:`s_i + s_j = 1` of a pair of means :math:`\theta_i, \theta_j`:

    * confidence: :math:`m = s_i\theta_i + s_j\theta_j`, ``top`` :math:`= d_1(\theta_i, m)`,
      ``bottom`` :math:`= d_1(\theta_j, m)`, Hessian factors :math:`(\theta_a - m)/\sqrt{V_1(m)}`;
    * budget: :math:`x = A_1'(s_i\eta_i + s_j\eta_j)`, ``top`` :math:`= d_1(x, \theta_i)`,
      ``bottom`` :math:`= d_1(x, \theta_j)`, Hessian factors :math:`\sqrt{V_1(x)}\,(\eta_a - \bar\eta)`.

    With weights :math:`w` summing to :math:`s`, the pair cost is :math:`w_i\,\mathrm{top} +
    w_j\,\mathrm{bottom}` and its Hessian is :math:`-f f^\top / s` with :math:`f` the two Hessian factors.
    """

    top: np.ndarray
    bottom: np.ndarray
    point: np.ndarray
    hessian_factor_top: np.ndarray
    hessian_factor_bottom: np.ndarray


class ConicPerspective(NamedTuple):
    """A convex CVXPY expression (one entry per pair) and the constraints that define its epigraph
    variables (see :meth:`ExponentialFamily.conic_confidence_perspective`)."""

    expression: Any
    constraints: list


def _no_conic_model(family: ExponentialFamily) -> NoReturn:
    fail("solve_topk(method='cvxpy')", "problem", "a problem whose family defines its conic perspective "
         "(ExponentialFamily.conic_confidence_perspective and conic_budget_perspective)", family)


_COMPILED_PAIR_NAMES: dict[tuple[type, str], str | None] = {}


def _compiled_pair_name(cls: type, kind: str) -> str | None:
    """The ``compiled_pair_family`` that applies to ``cls`` for ``kind``: that of the class declaring it, unless
    ``cls`` overrides that class's numpy pair kernel of ``kind`` (the compiled twin would not be its twin)."""
    if kind not in ("confidence", "budget"):
        return None
    declaring = next((base for base in cls.__mro__ if "compiled_pair_family" in vars(base)), None)
    name = None if declaring is None else vars(declaring)["compiled_pair_family"]
    if name is None:
        return None
    method = "unit_confidence_pair" if kind == "confidence" else "unit_budget_pair"
    if getattr(cls, method) is not getattr(declaring, method):
        return None
    return name


class ExponentialFamily(abc.ABC):
    r"""A one-parameter exponential family in mean parameterisation.

    Subclasses implement the unit-dispersion primitives (``unit_*``); the public methods divide by the
    dispersion (``1`` except for :class:`Gaussian`, where it is the variance).

    A family also declares its capabilities (class attributes whose defaults claim nothing; the solvers ask
    them instead of testing the family's class) and, for the CVXPY oracle, its conic perspectives.

    Attributes
    ----------
    name : str
        Short lower-case name, as accepted by :func:`get_family`.
    lower, upper : float
        The open interval of valid means.
    budget_equals_confidence : bool
        :math:`B_{ij}(\psi) = C_{ij}(\psi)` for every pair and allocation: the infimum point of the budget cost
        is the confidence one and :math:`d_1` is symmetric, as for the quadratic divergence (Wang, Yang, You
        2022, Remark 1). The CVXPY model then uses the confidence perspective for both kinds. Default False.
    harmonic_confidence_costs : bool
        :math:`C_{ij}(\psi) = (\theta_i - \theta_j)^2 / (2(\phi_i/\psi_i + \phi_j/\psi_j))`, i.e.
        :math:`d_1(x, y) = (x - y)^2/2`: :math:`1/C_{ij}` is linear in :math:`1/\psi`. Consequences the
        solvers use (through :meth:`harmonic_costs`): one calibrated-surrogate pass solves a forest exactly,
        the homogeneous CVXPY model is linear in ``inv_pos(psi)``, the double star of Theorem 3.4 has a
        closed-form solution, the pruning bound :math:`(\theta_i-\theta_j)^2/(2\max V_1)\,w_iw_j/(w_i+w_j)`
        is the cost itself, the left null vector of a component's KKT matrix is :math:`\pm\psi_a^2/\phi_a`
        (the sum-of-squares balance of Proposition 3.3), and the engine's pair costs and pull probabilities
        have closed forms (compiled kernels). Default False.
    mean_scaling_degree : int or None
        :math:`p` with :math:`d_1(2^{-a}x, 2^{-a}y) = 2^{-pa} d_1(x, y)`, when instances whose means lie near
        the ends of the floating-point range are solved on means scaled by a power of two
        (:meth:`~allocopt.TopKProblem.scaled`); ``None`` (default) when the means are used as given.
    has_dispersion_parameter : bool
        The dispersion is a parameter of the family (the Gaussian variance, the gamma shape) that
        :meth:`with_dispersion` can change, rather than fixed at 1. Default False.
    """

    name: ClassVar[str]
    lower: ClassVar[float]
    upper: ClassVar[float]
    mean_requirement: ClassVar[str]

    # -------------------------------------------------------------------------------------- capabilities
    budget_equals_confidence: ClassVar[bool] = False
    harmonic_confidence_costs: ClassVar[bool] = False
    mean_scaling_degree: ClassVar[int | None] = None
    has_dispersion_parameter: ClassVar[bool] = False
    compiled_pair_family: ClassVar[str | None] = None

    def harmonic_costs(self, kind: str) -> bool:
        r"""Whether the pair costs of ``kind`` (``"confidence"``: :math:`C_{ij}`, ``"budget"``: :math:`B_{ij}`)
        are :math:`(\theta_i - \theta_j)^2 / (2(\phi_i/\psi_i + \phi_j/\psi_j))`: the confidence costs
        when :attr:`harmonic_confidence_costs`, the budget costs when also :attr:`budget_equals_confidence`.

        Examples
        --------
        >>> from allocopt.families import Gaussian, Poisson
        >>> Gaussian(0.25).harmonic_costs("budget"), Poisson().harmonic_costs("confidence")
        (True, False)
        """
        return self.harmonic_confidence_costs and (kind == "confidence" or self.budget_equals_confidence)

    def compiled_pair(self, kind: str) -> Any | None:
        r"""The compiled (numba) scalar twin of :meth:`unit_confidence_pair` (``kind="confidence"``) or
        :meth:`unit_budget_pair` (``kind="budget"``), or ``None``.

        The kernel maps scalar ``(theta_top, theta_bottom, share_top, share_bottom)`` to the tuple of the five
        fields of :class:`PairDivergences` (:mod:`allocopt.families.kernels`: the same operations as the numpy
        kernel, agreeing with it to a few ulps). A family declares one by naming its unit functions in the class
        attribute ``compiled_pair_family``; a subclass that overrides the numpy pair kernels gets ``None`` (its
        own kernels then run through the generic path), as does every family when the compiled kernels are off
        (:func:`allocopt._numba.compiled_kernels`) or numba is unavailable.

        Examples
        --------
        >>> from allocopt.families import Bernoulli, Poisson
        >>> kernel = Bernoulli().compiled_pair("confidence")
        >>> kernel is None or kernel(0.9, 0.1, 0.5, 0.5)[2] == 0.5  # the infimum point is the midpoint
        True
        >>> class Custom(Poisson):
        ...     def unit_confidence_pair(self, theta_top, theta_bottom, share_top, share_bottom):
        ...         return super().unit_confidence_pair(theta_top, theta_bottom, share_top, share_bottom)
        >>> Custom().compiled_pair("confidence") is None
        True
        """
        name = self._compiled_pair_name(kind)
        if name is None:
            return None
        return pair_kernel(name, kind)

    def _compiled_pair_name(self, kind: str) -> str | None:
        key = (type(self), kind)
        if key not in _COMPILED_PAIR_NAMES:  # resolved once per class and kind
            _COMPILED_PAIR_NAMES[key] = _compiled_pair_name(type(self), kind)
        return _COMPILED_PAIR_NAMES[key]

    def _compiled_pair_code(self, kind: str) -> int | None:
        """``kernel_code(self.compiled_pair(kind))`` (:func:`allocopt.families.kernels.kernel_code`) without
        fetching the kernel: the number under which the package's compiled callers evaluate this family's pair
        kernel, or ``None``."""
        name = self._compiled_pair_name(kind)
        if name is None:
            return None
        return pair_code(name, kind)

    def with_dispersion(self, dispersion: float | ArrayLike) -> ExponentialFamily:
        """This family with its dispersion replaced (families with :attr:`has_dispersion_parameter` only;
        the others raise :class:`~allocopt.exceptions.InvalidArgumentError`)."""
        fail(f"{type(self).__name__}.with_dispersion", "dispersion",
             f"left unchanged: the {self.name} family has no dispersion parameter (its dispersion is 1)", dispersion)

    # ------------------------------------------------------------------------------ conic perspectives
    def conic_confidence_perspective(self, cp: Any, total: Any, moment: Any, centre: np.ndarray) -> ConicPerspective:
        r"""The perspective :math:`S\,d_1(M/S, c)` of :math:`d_1(\cdot, c)` as a convex CVXPY expression, one
        entry per pair, with :math:`S = w_i + w_j` (``total``) and :math:`M = w_i\theta_i + w_j\theta_j`
        (``moment``) affine expressions of the effective weights and ``centre`` :math:`c` a mean per pair.

        The CVXPY model writes :math:`C_{ij} = w_i d_1(\theta_i, c) + w_j d_1(\theta_j, c) - S\,d_1(M/S, c)`
        (a Bregman identity, any centre). ``cp`` is the ``cvxpy`` module, passed in so that cvxpy is imported
        only when a model is built. A family without a conic representation keeps this default, which raises
        :class:`~allocopt.exceptions.InvalidArgumentError` (``method="cvxpy"`` is then unavailable).
        """
        _no_conic_model(self)

    def conic_budget_perspective(self, cp: Any, total: Any, natural_moment: Any, mean_centre: np.ndarray,
                                 eta_centre: np.ndarray) -> ConicPerspective:
        r"""The perspective :math:`S\tilde A_1(N/S)` of the centred log-partition
        :math:`\tilde A_1(\eta) = A_1(\eta) - A_1(\eta_c) - x_c(\eta - \eta_c)` as a convex CVXPY expression,
        with :math:`S = w_i + w_j` (``total``), :math:`N = w_i\eta_i + w_j\eta_j` (``natural_moment``) and the
        centre's mean :math:`x_c` and unit natural parameter :math:`\eta_c`.

        The CVXPY model writes :math:`B_{ij} = w_i d_1(x_c, \theta_i) + w_j d_1(x_c, \theta_j) - S\tilde
        A_1(N/S)`. Not called when :attr:`budget_equals_confidence` (the confidence perspective serves both
        kinds). The default raises :class:`~allocopt.exceptions.InvalidArgumentError`, as
        :meth:`conic_confidence_perspective`.
        """
        _no_conic_model(self)

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

    def unit_deviation_bound(self, low: ArrayLike, high: ArrayLike) -> np.ndarray:
        r""":math:`\sqrt{\max_{z \in [\mathrm{low}, \mathrm{high}]} V_1(z)}`, the scale of the pruning bound
        :math:`\tfrac12 ((x - y)/\sqrt{\max V_1})^2` (:mod:`allocopt.topk._scan`), formed without squaring the
        means where the family can (exponential arms: the larger mean itself), so that it stays within the
        floating-point range for means near its ends. The default is the square root of
        :meth:`unit_variance_bound`, ``nan`` where that is not a normal floating-point number (the pruning then
        skips the pair's bound); any value at least the true one is valid.

        Examples
        --------
        >>> from allocopt.families import Exponential, Poisson
        >>> float(Poisson().unit_deviation_bound(1.0, 4.0)), float(Exponential().unit_deviation_bound(1e200, 3e200))
        (2.0, 3e+200)
        """
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            variance = np.asarray(self.unit_variance_bound(low, high), dtype=float)
            normal = (variance >= np.finfo(float).tiny) & (variance <= np.finfo(float).max)
            return np.sqrt(np.where(normal, variance, np.nan))

    @abc.abstractmethod
    def sample(self, means: ArrayLike, size: Any, rng: np.random.Generator) -> np.ndarray:
        """Draw rewards of the members with the given means (shape ``size`` broadcast with ``means``)."""

    # ------------------------------------------------------------------------------------ pair kernels
    def pair_error_bound(self, kind: str, means: ArrayLike) -> float:
        r"""A bound on the relative error with which :meth:`unit_confidence_pair` (``kind="confidence"``) or
        :meth:`unit_budget_pair` (``kind="budget"``) evaluate the pair costs and their gradients for any two
        of ``means`` and any shares.

        The certificate of the top-k solvers adds this error to its gap, so that rounding never makes it
        report a gap below the true one. The generic offset algorithm of this base class loses relative
        precision near the ends of a mean domain, by an amount that depends on the family; its bound,
        :math:`10^{-10}`, is a generous allowance for means of moderate size, and families should override
        it with a derived one (the built-in families do).
        """
        return GENERIC_PAIR_ERROR

    def unit_confidence_pair(self, theta_top: ArrayLike, theta_bottom: ArrayLike, share_top: ArrayLike,
                             share_bottom: ArrayLike) -> PairDivergences:
        r"""Divergences of the means to their share-weighted average :math:`m = s_i\theta_i + s_j\theta_j`
        (see :class:`PairDivergences`; arrays broadcast together, shares sum to one).

        This generic version works from the offsets :math:`m - \theta_a` (:meth:`unit_kl_offset`); the
        built-in families override it with forms that keep full relative precision over their whole mean
        domain (complements :math:`1 - m` formed as share-weighted sums, exact ratios of far-apart means).
        """
        theta_top, theta_bottom = np.asarray(theta_top, dtype=float), np.asarray(theta_bottom, dtype=float)
        gap = theta_top - theta_bottom
        offset_top, offset_bottom = -share_bottom * gap, share_top * gap  # m - theta
        point = theta_top + offset_top
        scale = 1.0 / np.sqrt(self.unit_variance(point))
        return PairDivergences(self.unit_kl_offset(theta_top, offset_top),
                               self.unit_kl_offset(theta_bottom, offset_bottom), point,
                               -offset_top * scale, -offset_bottom * scale)

    def unit_budget_pair(self, theta_top: ArrayLike, theta_bottom: ArrayLike, eta_top: ArrayLike,
                         eta_bottom: ArrayLike, share_top: ArrayLike, share_bottom: ArrayLike) -> PairDivergences:
        r"""Divergences from :math:`x = A_1'(s_i\eta_i + s_j\eta_j)` to the means (see
        :class:`PairDivergences`); ``eta_*`` are the unit natural parameters of the means.

        The generic version works from natural-parameter and mean offsets (:meth:`unit_natural_difference`,
        :meth:`unit_mean_difference`); the built-in families override it with full-precision forms.
        """
        theta_top, theta_bottom = np.asarray(theta_top, dtype=float), np.asarray(theta_bottom, dtype=float)
        natural_gap = self.unit_natural_difference(theta_top, theta_bottom)
        natural_offset_top, natural_offset_bottom = -share_bottom * natural_gap, share_top * natural_gap
        mean_offset_top = self.unit_mean_difference(eta_top, natural_offset_top, theta_top)
        mean_offset_bottom = self.unit_mean_difference(eta_bottom, natural_offset_bottom, theta_bottom)
        point = theta_top + mean_offset_top
        scale = np.sqrt(self.unit_variance(point))
        return PairDivergences(self.unit_kl_offset(theta_top + mean_offset_top, -mean_offset_top),
                               self.unit_kl_offset(theta_bottom + mean_offset_bottom, -mean_offset_bottom), point,
                               -natural_offset_top * scale, -natural_offset_bottom * scale)

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
        inside = (array > self.lower) & (array < self.upper)
        if not inside.all():
            outside = np.flatnonzero(~inside)
            raise InvalidInstanceError(
                f"The {name!r} parameter of {func} must be {self.mean_requirement} for the {self.name} family. "
                f"Got {describe(array)} instead (entries {outside.tolist()} are outside)."
            )
        return array

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExponentialFamily) and type(self) is type(other) and np.array_equal(
            self.dispersion, other.dispersion)

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.dispersion.tobytes()))
