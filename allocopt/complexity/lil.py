r"""The finite-time law-of-the-iterated-logarithm confidence radius of Jiang, Li, Qiao (2017).

Source: Jiang, Li, Qiao (2017), *Practical Algorithms for Best-K Identification in Multi-Armed Bandits*,
Lemma 2.1 (after Jamieson et al. 2014, Lemma 3) and Section 5 (the form used in the experiments).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from .._validation import as_float_array, as_choice, as_float, as_positive_float, describe, fail
from ..exceptions import InvalidArgumentError
from ._inputs import FloatOrArray

__all__ = ["lil_radius", "c_eps", "LIL_FORMS"]

ArrayLike = Any

LIL_FORMS = ("paper", "experiments")


def lil_radius(t: ArrayLike, omega: float, eps: float, sigma: float,
               form: Literal["paper", "experiments"] = "paper") -> FloatOrArray:
    r"""LIL confidence radius :math:`U(t, \omega)` after :math:`t` samples of a :math:`\sigma`-sub-Gaussian arm.

    Paper form (Jiang, Li, Qiao 2017, Lemma 2.1):

    .. math:: U(t,\omega) = (1+\sqrt\epsilon)\sqrt{\frac{2\sigma^2(1+\epsilon)}{t}
              \log\frac{\log((1+\epsilon)t)}{\omega}}.

    For i.i.d. centred :math:`\sigma`-sub-Gaussian samples, :math:`\epsilon \in (0,1)` and
    :math:`\omega \in (0, \log(1+\epsilon)/e)`, the empirical mean stays below :math:`U(t,\omega)` for all
    :math:`t \ge 1` with probability at least :math:`1 - c_\epsilon\omega^{1+\epsilon}` (:func:`c_eps`).

    Experiments form (Jiang, Li, Qiao 2017, Section 5): :math:`\log((1+\epsilon)t + 2)` replaces
    :math:`\log((1+\epsilon)t)` "to avoid negative numbers inside the log"; the paper's heuristic runs use
    :math:`\epsilon = 0`.

    Parameters
    ----------
    t : array_like
        Sample counts, each ``>= 1`` (any shape; the result has the same shape).
    omega : float
        Confidence parameter, ``omega > 0`` (lil'RandLUCB uses :math:`\delta/(2(N-K))` and :math:`\delta/(2K)`,
        lil'CLUCB :math:`\delta/N`).
    eps : float
        :math:`\epsilon`, ``> 0`` for the paper form and ``>= 0`` for the experiments form.
    sigma : float
        Sub-Gaussian parameter :math:`\sigma > 0` (the experiments use Gaussian rewards of variance 1/4, so
        :math:`\sigma = 1/2`).
    form : {"paper", "experiments"}
        Which form of :math:`U`.

    Raises
    ------
    InvalidArgumentError
        When the radius is not a real number for some ``t``: the paper form needs
        :math:`\log((1+\epsilon)t) \ge \omega` (Lemma 2.1's condition :math:`\omega < \log(1+\epsilon)/e`
        guarantees it for every :math:`t \ge 1`).

    Examples
    --------
    >>> round(float(lil_radius(100, 0.01, 0.5, 0.5)), 6)
    0.368615
    >>> round(float(lil_radius(100, 0.01, 0.0, 0.5, form="experiments")), 6)  # sqrt(log(log(102)/0.01)/200)
    0.175166
    """
    func = "lil_radius"
    checked_form = as_choice(form, func, "form", LIL_FORMS)
    counts = as_float_array(t, func, "t", "a number >= 1 or an array of numbers >= 1")
    if counts.size == 0 or not np.all(np.isfinite(counts)) or np.any(counts < 1):
        fail(func, "t", "a number >= 1 or an array of numbers >= 1 (sample counts)", t)
    omega = as_positive_float(omega, func, "omega")
    if checked_form == "paper":
        eps = as_positive_float(eps, func, "eps")
    else:
        eps = as_float(eps, func, "eps", low=0.0, requirement="a finite number >= 0")
    sigma = as_positive_float(sigma, func, "sigma")
    shift = 0.0 if checked_form == "paper" else 2.0
    iterated = np.log((1.0 + eps) * counts + shift)
    ratio = iterated / omega
    if np.any(ratio < 1.0):
        bad = counts[ratio < 1.0]
        raise InvalidArgumentError(
            f"The 'omega' parameter of {func} must be at most log((1 + eps) t) for every t so that the radius is "
            f"real (Lemma 2.1 takes omega < log(1 + eps)/e). Got omega={omega!r} with eps={eps!r}, which fails at "
            f"t = {describe(bad)} instead."
        )
    return (1.0 + np.sqrt(eps)) * np.sqrt(2.0 * sigma**2 * (1.0 + eps) / counts * np.log(ratio))[()]


def c_eps(eps: float) -> float:
    r"""The constant :math:`c_\epsilon` of Lemma 2.1 of Jiang, Li, Qiao (2017).

    .. math:: c_\epsilon = \frac{2+\epsilon}{\epsilon}\Big(\frac{1}{\log(1+\epsilon)}\Big)^{1+\epsilon}.

    Jiang, Li, Qiao (2017), Lemma 2.1: the LIL bound fails with probability at most
    :math:`c_\epsilon\omega^{1+\epsilon}`; lil'RandLUCB is correct with probability at least :math:`1 -
    c_\epsilon\delta` (Theorem 3.1). The lemma takes :math:`\epsilon \in (0, 1)`; any ``eps > 0`` is accepted.

    Examples
    --------
    >>> round(c_eps(0.5), 6)  # 5 * (1 / log 1.5) ** 1.5
    19.365993
    """
    eps = as_positive_float(eps, "c_eps", "eps")
    return float((2.0 + eps) / eps * (1.0 / np.log1p(eps)) ** (1.0 + eps))
